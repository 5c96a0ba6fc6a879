// How delivery workers learn that rows are due: in this process an event on ctx.wake, in every
// other process a PostgreSQL NOTIFY on WAKE_CHANNEL (workers LISTEN on it; SQLite workers poll).
import type { Pool, PoolClient } from 'pg';
import type { Logger } from 'pino';
import type { AppContext } from '../app-context.ts';

/** PostgreSQL channel notified (delivered at commit) when delivery rows are queued. */
export const WAKE_CHANNEL = 'svc_webhooks';

/** The ctx.wake event that starts this process's delivery worker. */
export const WAKE_EVENT = 'webhooks';

/**
 * Wakes the delivery workers after a committed insert outside the event outbox (a retry, a test
 * delivery). Never rejects: a lost wake-up only costs the poll interval.
 */
export async function wakeDeliveryWorkers(ctx: Pick<AppContext, 'wake' | 'db'>): Promise<void> {
  ctx.wake.emit(WAKE_EVENT);
  if (ctx.db.dialect === 'postgres')
    await ctx.db.pool?.query('select pg_notify($1, $2)', [WAKE_CHANNEL, '']).catch(() => {});
}

const LISTEN_RETRY_MS = 5_000;

/**
 * PostgreSQL: a pooled client LISTENing on WAKE_CHANNEL (a NOTIFY arrives at commit). A lost or
 * failed listener only costs latency: the worker polls meanwhile, and listens again.
 */
export class WakeListener {
  readonly #pool: Pool;
  readonly #onWake: () => void;
  readonly #log: Logger;
  #client: PoolClient | null = null;
  #retryAt = 0;

  constructor(pool: Pool, onWake: () => void, log: Logger) {
    this.#pool = pool;
    this.#onWake = onWake;
    this.#log = log;
  }

  /** Listens unless it already does (or tried less than LISTEN_RETRY_MS ago). */
  async ensure(): Promise<void> {
    if (this.#client || Date.now() < this.#retryAt) return;
    this.#retryAt = Date.now() + LISTEN_RETRY_MS;
    let client: PoolClient | null = null;
    try {
      client = await this.#pool.connect();
      const lost = (error?: Error) => {
        if (this.#client !== client) return;
        this.#client = null;
        client!.release(error ?? true);
      };
      client.on('notification', this.#onWake);
      client.on('error', lost);
      client.on('end', () => lost());
      await client.query(`listen ${WAKE_CHANNEL}`);
      this.#client = client;
    } catch (error) {
      if (client) client.release(true);
      this.#log.warn({ err: error }, 'LISTEN failed; the webhook worker polls until it succeeds');
    }
  }

  async close(): Promise<void> {
    const client = this.#client;
    this.#client = null;
    if (!client) return;
    client.removeAllListeners('notification');
    await client.query(`unlisten ${WAKE_CHANNEL}`).catch(() => {});
    client.release();
  }
}
