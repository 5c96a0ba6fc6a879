// The delivery loop of one worker process: claim due rows (leased), attempt up to
// SERVICE_WEBHOOKS_CONCURRENCY of them at once, write results in micro-batches (one transaction
// per batch), and sleep until a dispatch wakes it (in-process event on SQLite, LISTEN/NOTIFY on
// PostgreSQL) or the poll interval passes. On abort (SIGTERM) it claims nothing more and waits for
// the attempts in flight; a row it never finishes is claimed again when its lease expires.
import { performance } from 'node:perf_hooks';
import type { Transaction } from 'kysely';
import type { PoolClient } from 'pg';
import type { AppContext } from '../app-context.ts';
import type { Database } from '../db/schema.ts';
import { queueMail } from '../mail/outbox.ts';
import { nowIso } from '../util/time.ts';
import { sleep, type WorkerTask } from '../worker/worker.ts';
import { WAKE_CHANNEL } from './dispatch.ts';
import { DeliveryClient, USER_AGENT, describeFailure } from './http-client.ts';
import { webhookLog, warnIfGuardRelaxed } from './log.ts';
import { claimDue, purgeDeliveryLogs, recordResult, type AttemptResult, type ClaimedDelivery } from './queue.ts';
import { signatureHeader } from './signing.ts';
import { AddressGuard } from './ssrf.ts';
import { signingKeys } from './subscriptions.ts';

const POLL_MS = 1000;
const MAX_CLAIM = 200;
const MAX_WRITE_BATCH = 500;
const PURGE_INTERVAL_MS = 3600_000;

export interface DeliveryWorkerOptions {
  /** Extra CA certificates to trust (tests with a private CA). */
  ca?: string | Buffer | Array<string | Buffer>;
}

interface LoadedSubscription {
  id: string;
  team_id: string;
  url: string;
  secret_encrypted: string;
  previous_secret_encrypted: string | null;
  previous_secret_expires_at: string | null;
  subscription_active: number;
  team_active: number;
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
        let claimed: ClaimedDelivery[] = [];
        let requested = 0;
        // Under load, claim in batches (a quarter of the slots at least) rather than one row per
        // finished attempt: one claim statement then feeds many attempts.
        if (free > 0 && (this.#inFlight.size === 0 || free >= this.#minClaim)) {
          this.#kicked = false;
          requested = Math.min(free, MAX_CLAIM);
          try {
            claimed = await claimDue(ctx.db.kysely, ctx.db.dialect, requested, settings.leaseSeconds);
            if (claimed.length > 0) await this.#start(claimed);
          } catch (error) {
            log.error({ err: error }, 'webhook claim failed');
            await this.#sleep(POLL_MS);
            continue;
          }
          // A full batch means more may be due: go again at once while there is room.
          if (claimed.length === requested && this.#inFlight.size < settings.concurrency) continue;
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

  async #start(claimed: ClaimedDelivery[]): Promise<void> {
    const ids = [...new Set(claimed.map((row) => row.subscription_id))];
    const subscriptions = await this.#ctx.db.kysely
      .selectFrom('webhook_subscriptions as s')
      .innerJoin('teams as t', 't.id', 's.team_id')
      .select([
        's.id',
        's.team_id',
        's.url',
        's.secret_encrypted',
        's.previous_secret_encrypted',
        's.previous_secret_expires_at',
        's.is_active as subscription_active',
        't.is_active as team_active',
      ])
      .where('s.id', 'in', ids)
      .execute();
    const byId = new Map(subscriptions.map((s) => [s.id, s as LoadedSubscription]));
    for (const row of claimed) {
      // Never two attempts of one row at once (a lease cannot expire under a running attempt:
      // the lease is longer than the delivery timeout, see config.ts).
      if (this.#inFlight.has(row.id)) continue;
      const work = this.#attempt(row, byId.get(row.subscription_id))
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

  /** A retry due sooner than the next poll wakes the loop on time (short schedules, tests). */
  #wakeForRetry(result: AttemptResult) {
    const { retryDelays, maxRetries } = this.#ctx.config.webhooks;
    if (result.ok || !result.attempted || result.delivery.attempt >= maxRetries) return;
    const delayMs = retryDelays[result.delivery.attempt] * 1000;
    if (delayMs < POLL_MS) setTimeout(this.#kick, delayMs + 5).unref();
  }

  async #attempt(delivery: ClaimedDelivery, subscription: LoadedSubscription | undefined): Promise<AttemptResult> {
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
        new URL(subscription.url),
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

interface Pending {
  result: AttemptResult;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * Micro-batched result writes: results that finish while a batch is being written go into the next
 * one, so under load one transaction carries many results (one commit instead of hundreds).
 */
class ResultWriter {
  readonly #ctx: AppContext;
  #queue: Pending[] = [];
  #running: Promise<void> | null = null;

  constructor(ctx: AppContext) {
    this.#ctx = ctx;
  }

  add(result: AttemptResult): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ result, resolve, reject });
      this.#running ??= this.#flush().finally(() => {
        this.#running = null;
      });
    });
  }

  async drain(): Promise<void> {
    while (this.#running) await this.#running;
  }

  async #flush(): Promise<void> {
    // Results that complete in the same turn of the event loop join one transaction: without this
    // pause each batch held the one or two results ready at that instant, and the commits, not the
    // HTTP requests, bounded the delivery rate (docs/performance.md).
    await new Promise((resolve) => setImmediate(resolve));
    while (this.#queue.length > 0) {
      const batch = this.#queue.splice(0, MAX_WRITE_BATCH);
      // Subscription rows are updated in one order in every worker: no lock cycles on PostgreSQL.
      batch.sort((a, b) => (a.result.delivery.subscription_id < b.result.delivery.subscription_id ? -1 : a.result.delivery.subscription_id > b.result.delivery.subscription_id ? 1 : 0));
      try {
        await this.#ctx.db.kysely.transaction().execute(async (trx) => {
          const reset = new Set<string>();
          for (const item of batch) await writeResult(this.#ctx, trx, item.result, reset);
        });
        for (const item of batch) item.resolve();
      } catch {
        // One bad result (or a lock conflict) must not cost the others: write them one by one. A row
        // whose write still fails stays pending under its lease and is attempted again after it.
        for (const item of batch) {
          try {
            await this.#ctx.db.kysely.transaction().execute((trx) => writeResult(this.#ctx, trx, item.result));
            item.resolve();
          } catch (error) {
            item.reject(error);
          }
        }
      }
    }
  }
}

/**
 * Writes one result and keeps the subscription's consecutive-failure count. `reset` holds the
 * subscriptions whose count this batch has already set to 0 with no failure since, so a run of
 * successes costs one counter statement per subscription per batch, not one per delivery.
 */
async function writeResult(ctx: AppContext, trx: Transaction<Database>, result: AttemptResult, reset = new Set<string>()): Promise<void> {
  const settings = ctx.config.webhooks;
  const { written } = await recordResult(trx, result, settings);
  if (!written || !result.attempted) return;
  const subscriptionId = result.delivery.subscription_id;
  if (result.ok) {
    if (reset.has(subscriptionId)) return;
    await trx.updateTable('webhook_subscriptions').set({ consecutive_failures: 0 }).where('id', '=', subscriptionId).where('consecutive_failures', '<>', 0).execute();
    reset.add(subscriptionId);
    return;
  }
  reset.delete(subscriptionId);
  const counted = await trx
    .updateTable('webhook_subscriptions')
    .set((eb) => ({ consecutive_failures: eb('consecutive_failures', '+', 1) }))
    .where('id', '=', subscriptionId)
    .returning(['consecutive_failures', 'is_active', 'team_id', 'url'])
    .executeTakeFirst();
  if (!counted || counted.is_active !== 1 || counted.consecutive_failures < settings.autoDisableAfter) return;
  const now = nowIso();
  const reason = `Disabled automatically after ${counted.consecutive_failures} consecutive failed delivery attempts.`;
  const disabled = await trx
    .updateTable('webhook_subscriptions')
    .set({ is_active: 0, disabled_at: now, disabled_reason: reason, updated_at: now })
    .where('id', '=', subscriptionId)
    .where('is_active', '=', 1)
    .executeTakeFirst();
  if (Number(disabled.numUpdatedRows) === 0) return;
  webhookLog(ctx).warn(
    { event: 'webhook.subscription.disabled', subscription_id: subscriptionId, team_id: counted.team_id, consecutive_failures: counted.consecutive_failures },
    'webhook.subscription.disabled',
  );
  const owners = await trx
    .selectFrom('memberships as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .innerJoin('teams as t', 't.id', 'm.team_id')
    .select(['u.email', 't.name'])
    .where('m.team_id', '=', counted.team_id)
    .where('m.role', '=', 'owner')
    .where('u.is_active', '=', 1)
    .execute();
  if (owners.length === 0) return;
  await queueMail(ctx, trx, {
    to: owners.map((o) => o.email),
    subject: `Webhook disabled for ${owners[0].name}`,
    text: [
      `The webhook endpoint ${counted.url} of your team ${owners[0].name} failed ${counted.consecutive_failures} delivery attempts in a row,`,
      'so it has been disabled and receives no more events.',
      '',
      `Fix the endpoint, then re-enable it with PATCH /api/v1/teams/${counted.team_id}/webhooks/${subscriptionId}/ {"is_active": true}.`,
      'Events that failed meanwhile are in its delivery log as dead letters and can be retried.',
    ].join('\n'),
  });
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
