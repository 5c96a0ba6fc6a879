// The delivery loop of one worker process: claim due rows (leased), attempt up to
// SERVICE_WEBHOOKS_CONCURRENCY of them at once, write results in micro-batches (one transaction
// per batch), and sleep until a dispatch wakes it (in-process event on SQLite, LISTEN/NOTIFY on
// PostgreSQL) or the poll interval passes. On abort (SIGTERM) it claims nothing more and waits for
// the attempts in flight; a row it never finishes is claimed again when its lease expires.
import { performance } from 'node:perf_hooks';
import type { PoolClient } from 'pg';
import type { AppContext } from '../app-context.ts';
import { nowIso } from '../util/time.ts';
import { sleep, type WorkerTask } from '../worker/worker.ts';
import { WAKE_CHANNEL } from './dispatch.ts';
import { DeliveryClient, USER_AGENT, describeFailure } from './http-client.ts';
import { webhookLog, warnIfGuardRelaxed } from './log.ts';
import { claimDue, purgeDeliveryLogs, type AttemptResult, type ClaimedDelivery, type DeliveryTarget } from './queue.ts';
import { ResultWriter } from './results.ts';
import { signatureHeader } from './signing.ts';
import { AddressGuard } from './ssrf.ts';
import { signingKeys } from './subscriptions.ts';

const POLL_MS = 1000;
const MAX_CLAIM = 200;
const PURGE_INTERVAL_MS = 3600_000;

export interface DeliveryWorkerOptions {
  /** Extra CA certificates to trust (tests with a private CA). */
  ca?: string | Buffer | Array<string | Buffer>;
}

export function webhookDeliveryTask(options: DeliveryWorkerOptions = {}): WorkerTask {
  return { name: 'webhook-deliveries', run: (ctx, signal) => new DeliveryLoop(ctx, options).run(signal) };
}

class DeliveryLoop {
  readonly #ctx: AppContext;
  readonly #client: DeliveryClient;
  readonly #inFlight = new Map<number, Promise<void>>();
  readonly #writer: ResultWriter;
  readonly #minClaim: number;
  #listener: PoolClient | null = null;
  #listenRetryAt = 0;
  #wakeup: (() => void) | null = null;
  #kicked = false;
  readonly #urls = new Map<string, URL>();

  constructor(ctx: AppContext, options: DeliveryWorkerOptions) {
    this.#ctx = ctx;
    const settings = ctx.config.webhooks;
    this.#client = new DeliveryClient({ guard: new AddressGuard(settings), timeoutMs: settings.deliveryTimeoutMs, ca: options.ca });
    this.#writer = new ResultWriter(ctx);
    this.#minClaim = Math.max(1, Math.floor(settings.concurrency / 4));
  }

  readonly #kick = () => {
    this.#kicked = true;
    this.#wakeup?.();
  };

  async run(signal: AbortSignal): Promise<void> {
    const ctx = this.#ctx;
    warnIfGuardRelaxed(ctx);
    const log = webhookLog(ctx);
    const settings = ctx.config.webhooks;
    ctx.wake.on('webhooks', this.#kick);
    signal.addEventListener('abort', this.#kick, { once: true });
    try {
      while (!signal.aborted) {
        // (Re)subscribe to NOTIFY on PostgreSQL; a lost listener only costs latency (polling goes on).
        if (ctx.db.pool && !this.#listener && Date.now() >= this.#listenRetryAt) await this.#listen();
        const free = settings.concurrency - this.#inFlight.size;
        let claimed = 0;
        let requested = 0;
        // Under load, claim in batches (a quarter of the slots at least) rather than one row per
        // finished attempt: one claim statement then feeds many attempts.
        if (free > 0 && (this.#inFlight.size === 0 || free >= this.#minClaim)) {
          this.#kicked = false;
          requested = Math.min(free, MAX_CLAIM);
          try {
            const claim = await claimDue(ctx.db.kysely, ctx.db.dialect, requested, settings.leaseSeconds);
            claimed = claim.rows.length;
            this.#start(claim.rows, claim.targets);
          } catch (error) {
            log.error({ err: error }, 'webhook claim failed');
            await this.#sleep(POLL_MS);
            continue;
          }
          // A full batch means more may be due: go again at once while there is room.
          if (claimed === requested && this.#inFlight.size < settings.concurrency) continue;
        }
        // Wait for a free slot (an attempt finishing kicks), a dispatch, or the poll interval.
        await this.#sleep(POLL_MS);
      }
    } finally {
      ctx.wake.off('webhooks', this.#kick);
      await Promise.allSettled(this.#inFlight.values());
      await this.#writer.drain();
      await this.#client.close();
      const listener = this.#listener;
      this.#listener = null;
      if (listener) {
        listener.removeAllListeners('notification');
        await listener.query(`unlisten ${WAKE_CHANNEL}`).catch(() => {});
        listener.release();
      }
    }
  }

  /** PostgreSQL: a pooled client LISTENing on the wake channel (NOTIFY arrives at commit). */
  async #listen(): Promise<void> {
    const pool = this.#ctx.db.pool!;
    this.#listenRetryAt = Date.now() + 5_000;
    let client: PoolClient | null = null;
    try {
      client = await pool.connect();
      const lost = (error?: Error) => {
        if (this.#listener !== client) return;
        this.#listener = null;
        client!.release(error ?? true);
      };
      client.on('notification', this.#kick);
      client.on('error', lost);
      client.on('end', () => lost());
      await client.query(`listen ${WAKE_CHANNEL}`);
      this.#listener = client;
    } catch (error) {
      if (client) client.release(true);
      webhookLog(this.#ctx).warn({ err: error }, 'LISTEN failed; the webhook worker polls until it succeeds');
    }
  }

  #sleep(ms: number): Promise<void> {
    if (this.#kicked) {
      this.#kicked = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const self = this;
      function done() {
        clearTimeout(timer);
        self.#wakeup = null;
        self.#kicked = false;
        resolve();
      }
      this.#wakeup = done;
    });
  }

  #start(claimed: ClaimedDelivery[], targets: Map<string, DeliveryTarget>): void {
    for (const row of claimed) {
      // Never two attempts of one row at once (a lease cannot expire under a running attempt:
      // the lease is longer than the delivery timeout, see config.ts).
      if (this.#inFlight.has(row.id)) continue;
      const work = this.#attempt(row, targets.get(row.subscription_id))
        .then(async (result) => {
          await this.#writer.add(result);
          this.#wakeForRetry(result);
        })
        .catch((error) => webhookLog(this.#ctx).error({ err: error, delivery_id: row.id }, 'webhook result not written'))
        .finally(() => {
          this.#inFlight.delete(row.id);
          this.#kick();
        });
      this.#inFlight.set(row.id, work);
    }
  }

  /** Parsed once per URL, not per attempt (a subscription's URL rarely changes). */
  #parsed(url: string): URL {
    let parsed = this.#urls.get(url);
    if (!parsed) {
      if (this.#urls.size >= 1000) this.#urls.clear();
      parsed = new URL(url);
      this.#urls.set(url, parsed);
    }
    return parsed;
  }

  /** A retry due sooner than the next poll wakes the loop on time (short schedules, tests). */
  #wakeForRetry(result: AttemptResult) {
    const { retryDelays, maxRetries } = this.#ctx.config.webhooks;
    if (result.ok || !result.attempted || result.delivery.attempt >= maxRetries) return;
    const delayMs = retryDelays[result.delivery.attempt] * 1000;
    if (delayMs < POLL_MS) setTimeout(this.#kick, delayMs + 5).unref();
  }

  async #attempt(delivery: ClaimedDelivery, subscription: DeliveryTarget | undefined): Promise<AttemptResult> {
    const attemptedAt = nowIso();
    const base = { delivery, attemptedAt };
    if (!subscription || subscription.subscription_active !== 1 || subscription.team_active !== 1) {
      const why = !subscription ? 'the subscription was deleted' : subscription.subscription_active !== 1 ? 'the subscription is inactive' : 'the team is inactive';
      return { ...base, attempted: false, ok: false, statusCode: null, durationMs: null, responseBody: `Not sent: ${why}.` };
    }
    const started = performance.now();
    let statusCode: number | null = null;
    let responseBody: string | null;
    try {
      const keys = signingKeys(this.#ctx.config.secretKey!, subscription);
      const timestamp = Math.floor(Date.now() / 1000);
      const response = await this.#client.post(
        this.#parsed(subscription.url),
        {
          'content-type': 'application/json',
          'user-agent': USER_AGENT,
          'x-service-signature': signatureHeader(keys, timestamp, delivery.payload),
          'x-service-event': delivery.event_type,
          'x-service-event-id': delivery.event_id,
          'x-service-attempt': String(delivery.attempt),
        },
        delivery.payload,
      );
      statusCode = response.statusCode;
      responseBody = response.body;
    } catch (error) {
      responseBody = describeFailure(error);
    }
    const ok = statusCode !== null && statusCode >= 200 && statusCode < 300;
    return { ...base, attempted: true, ok, statusCode, responseBody, durationMs: Math.round(performance.now() - started) };
  }
}

/** Deletes delivery-log rows (and events) older than SERVICE_WEBHOOKS_LOG_RETENTION_DAYS, hourly. */
export const webhookLogPurgeTask: WorkerTask = {
  name: 'webhook-log-purge',
  async run(ctx, signal) {
    while (!signal.aborted) {
      try {
        const deleted = await purgeDeliveryLogs(ctx.db.kysely, ctx.config.webhooks.logRetentionDays);
        if (deleted > 0) webhookLog(ctx).info({ deleted }, 'webhook delivery logs purged');
      } catch (error) {
        webhookLog(ctx).error({ err: error }, 'webhook log purge failed');
      }
      await sleep(PURGE_INTERVAL_MS, signal);
    }
  },
};
