// The delivery loop of one worker process. Three stages run side by side, so that no delivery slot
// waits on the database:
//   claim    due rows are claimed (leased) in batches into a small local buffer, ahead of need, and
//            claimed again when the buffer runs low;
//   attempt  up to SERVICE_WEBHOOKS_CONCURRENCY attempts at once; a slot takes the next buffered row
//            the moment its attempt ends;
//   write    results go to the micro-batched writer (results.ts) without holding a slot; a row stays
//            leased until its result is written, so nothing is claimed twice meanwhile. When too many
//            results are unwritten, no new attempt starts (back-pressure).
// It sleeps until a dispatch wakes it (in-process event on SQLite, LISTEN/NOTIFY on PostgreSQL) or
// the poll interval passes. On abort (SIGTERM) it starts nothing more, gives back the rows it
// claimed but never started, waits for the attempts in flight and writes every finished result;
// a row it never finishes is claimed again when its lease expires.
import { performance } from 'node:perf_hooks';
import type { PoolClient } from 'pg';
import type { AppContext } from '../app-context.ts';
import { nowIso } from '../util/time.ts';
import { sleep, type WorkerTask } from '../worker/worker.ts';
import { DeliveryClient, USER_AGENT, describeFailure } from './http-client.ts';
import { webhookLog, warnIfGuardRelaxed } from './log.ts';
import { claimDue, purgeDeliveryLogs, releaseClaims, type AttemptResult, type ClaimedDelivery, type DeliveryTarget } from './queue.ts';
import { ResultWriter } from './results.ts';
import { signatureHeader } from './signing.ts';
import { AddressGuard } from './ssrf.ts';
import { signingKeys } from './subscriptions.ts';
import { WAKE_CHANNEL, WAKE_EVENT } from './wake.ts';

const POLL_MS = 1000;
const MAX_CLAIM = 200;
const PURGE_INTERVAL_MS = 3600_000;
/** A row starts only with this much of its lease left beyond the delivery timeout (its result's write). */
const WRITE_MARGIN_MS = 1000;

export interface DeliveryWorkerOptions {
  /** Extra CA certificates to trust (tests with a private CA). */
  ca?: string | Buffer | Array<string | Buffer>;
  /**
   * Benchmark only, never set by the service: `false` sends deliveries without X-Service-Signature,
   * so bench/inproc/webhooks.ts can measure what signing costs the engine. Read at every attempt
   * (the benchmark flips it between measurement windows).
   */
  sign?: boolean;
}

export function webhookDeliveryTask(options: DeliveryWorkerOptions = {}): WorkerTask {
  return { name: 'webhook-deliveries', run: (ctx, signal) => new DeliveryLoop(ctx, options).run(signal) };
}

/** A claimed row waiting for a slot, with its subscription, when its lease ends, and its signature. */
interface Buffered {
  row: ClaimedDelivery;
  target: DeliveryTarget | undefined;
  leaseEnds: number;
  signature: Presigned | null;
}

/** An X-Service-Signature value made when the row was claimed, and when (ms). */
interface Presigned {
  header: string;
  at: number;
}

/**
 * A signature made at claim time is sent if at most this old; an older one (its row waited long in
 * the buffer) is made again at the attempt. Its `t` is then at most this far behind the sending
 * time, well inside the 5 minutes receivers tolerate.
 */
const MAX_SIGNATURE_AGE_MS = 5_000;

/**
 * The fewest rows to hold claimed beyond the running attempts: twice the concurrency (at least 16,
 * so a worker of one slot still claims several rows per statement; at most one claim's worth).
 * None when the lease cannot cover a wait of one attempt besides the row's own attempt and write;
 * a buffered row whose lease has run too short by the time a slot frees is given back (#fill).
 * Under load the buffer grows beyond this floor with the worker's rate (AHEAD_MS).
 */
export function claimAhead(concurrency: number, leaseMs: number, timeoutMs: number): number {
  if (leaseMs - WRITE_MARGIN_MS < 2 * timeoutMs) return 0;
  return Math.min(Math.max(2 * concurrency, 16), MAX_CLAIM);
}

/**
 * Under load the buffer holds this many milliseconds of attempts at the worker's recent rate
 * (measured over RATE_WINDOW_MS): enough to cover a claim's round trip, which on SQLite waits
 * behind the result write, so that no slot idles for it, and so each claim takes dozens of rows,
 * not a handful. Time, not a count: a worker whose receivers are slow holds few rows, which other
 * workers can claim meanwhile. A claim costs about the same for 5 rows as for 50, so a small fixed
 * buffer pays that cost per few deliveries (docs/performance.md, Webhook deliveries per worker).
 */
const AHEAD_MS = 20;
const RATE_WINDOW_MS = 250;

/**
 * Results are written once this many wait (or WRITE_DELAY_MS after the first): at least 64, so
 * that under load each write statement carries many results (its fixed cost, a round trip and
 * a plan, dwarfs a row's); when the rate is low, WRITE_DELAY_MS bounds the wait instead.
 */
const writeBatch = (concurrency: number) => Math.min(Math.max(concurrency, 64), 250);
const WRITE_DELAY_MS = 5;

class DeliveryLoop {
  readonly #ctx: AppContext;
  readonly #options: DeliveryWorkerOptions;
  readonly #client: DeliveryClient;
  readonly #writer: ResultWriter;
  readonly #concurrency: number;
  /** Rows to hold claimed beyond the running attempts now: claimAhead's floor, raised with the rate. */
  #ahead: number;
  readonly #aheadFloor: number;
  /** Attempts started since #rateSince (for the rate that sizes #ahead). */
  #started = 0;
  #rateSince = performance.now();
  /** At most this many results finished but not yet written; beyond it no attempt starts. */
  readonly #maxUnwritten: number;
  readonly #leaseMs: number;
  readonly #timeoutMs: number;
  /** Claimed, not started (FIFO: the claim orders by due time). */
  #buffer: Buffered[] = [];
  /** Attempts running (their promises settle once the result is handed to the writer). */
  readonly #attempts = new Set<Promise<void>>();
  /** Rows this worker holds: buffered, attempting, or with a result not yet written. */
  readonly #owned = new Set<number>();
  #unwritten = 0;
  /**
   * Subscriptions with a failed attempt not yet written, and how many. Their next attempts wait
   * for the write: it may disable the subscription (auto-disable), and then nothing more may be
   * sent to it, exactly as if every result were written before the next claim.
   */
  readonly #failing = new Map<string, number>();
  #stopping = false;
  /** The last claim found fewer due rows than asked for: claim again only when woken for work. */
  #drained = false;
  /** Woken for work (a dispatch, a retry coming due, the poll): the queue may have new due rows. */
  #due = true;
  #listener: PoolClient | null = null;
  #listenRetryAt = 0;
  #wakeup: (() => void) | null = null;
  readonly #urls = new Map<string, URL>();
  /**
   * Subscriptions this worker disabled while a claim was under way. On PostgreSQL that claim may
   * have read them before the disable committed: its rows of them must not be sent either.
   */
  #disabledDuringClaim: Set<string> | null = null;

  constructor(ctx: AppContext, options: DeliveryWorkerOptions) {
    this.#ctx = ctx;
    this.#options = options;
    const settings = ctx.config.webhooks;
    this.#client = new DeliveryClient({ guard: new AddressGuard(settings), timeoutMs: settings.deliveryTimeoutMs, ca: options.ca });
    this.#writer = new ResultWriter(ctx, { batch: writeBatch(settings.concurrency), delayMs: WRITE_DELAY_MS });
    this.#concurrency = settings.concurrency;
    this.#leaseMs = settings.leaseSeconds * 1000;
    this.#timeoutMs = settings.deliveryTimeoutMs;
    this.#ahead = this.#aheadFloor = claimAhead(this.#concurrency, this.#leaseMs, this.#timeoutMs);
    this.#maxUnwritten = 2 * writeBatch(this.#concurrency);
  }

  /** Work may be due: claim again even if the last claim came back short. */
  readonly #kick = () => {
    this.#due = true;
    this.#wakeup?.();
  };

  async run(signal: AbortSignal): Promise<void> {
    const ctx = this.#ctx;
    warnIfGuardRelaxed(ctx);
    const log = webhookLog(ctx);
    ctx.wake.on(WAKE_EVENT, this.#kick);
    signal.addEventListener('abort', this.#kick, { once: true });
    try {
      while (!signal.aborted) {
        // (Re)subscribe to NOTIFY on PostgreSQL; a lost listener only costs latency (polling goes on).
        if (ctx.db.pool && !this.#listener && Date.now() >= this.#listenRetryAt) await this.#listen();
        if (this.#due) {
          this.#due = false;
          this.#drained = false;
        }
        const wanted = this.#wanted();
        if (wanted > 0) {
          try {
            const leaseEnds = Date.now() + this.#leaseMs;
            const disabled = (this.#disabledDuringClaim = new Set());
            const claim = await claimDue(ctx.db, wanted, ctx.config.webhooks.leaseSeconds).finally(() => (this.#disabledDuringClaim = null));
            if (claim.rows.length < wanted) this.#drained = true;
            for (const id of disabled) {
              const target = claim.targets.get(id);
              if (target) claim.targets.set(id, asInactive(target));
            }
            this.#enqueue(claim.rows, claim.targets, leaseEnds);
          } catch (error) {
            log.error({ err: error }, 'webhook claim failed');
            await this.#sleep(POLL_MS);
          }
          if (signal.aborted) break;
          this.#fill();
          continue;
        }
        // Wait for the buffer to run low (an attempt ending wakes), a dispatch, or the poll interval.
        await this.#sleep(POLL_MS);
      }
    } finally {
      this.#stopping = true;
      ctx.wake.off(WAKE_EVENT, this.#kick);
      await this.#release(this.#buffer.splice(0));
      await Promise.allSettled(this.#attempts);
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

  /**
   * How many rows to claim now (0: none). The buffer is refilled when it is down to half its size,
   * with enough rows for every free slot and a full buffer, and at least a quarter of the slots (or
   * whatever is missing) per claim under load, so one statement feeds many attempts.
   */
  #wanted(): number {
    this.#resize();
    if (this.#drained || this.#unwritten >= this.#maxUnwritten) return 0;
    const held = this.#attempts.size + this.#buffer.length;
    if (this.#buffer.length > this.#ahead / 2) return 0;
    const room = this.#concurrency + this.#ahead - held;
    const minBatch = held === 0 ? 1 : Math.max(1, Math.floor(this.#concurrency / 4));
    return room < minBatch ? 0 : Math.min(room, MAX_CLAIM);
  }

  /** Once per RATE_WINDOW_MS: the buffer's size for AHEAD_MS at the rate of attempts just seen. */
  #resize(): void {
    const now = performance.now();
    const elapsed = now - this.#rateSince;
    if (elapsed < RATE_WINDOW_MS || this.#aheadFloor === 0) return;
    const wanted = Math.ceil((this.#started * AHEAD_MS) / elapsed);
    this.#ahead = Math.min(Math.max(wanted, this.#aheadFloor), MAX_CLAIM);
    this.#started = 0;
    this.#rateSince = now;
  }

  #enqueue(rows: ClaimedDelivery[], targets: Map<string, DeliveryTarget>, leaseEnds: number): void {
    // Signed here, the whole claim in one go: an HMAC-SHA256 made one at a time between network
    // I/O costs several times what it costs in a run of them (OpenSSL's state is cold by then)
    // (docs/performance.md, Signed ÷ unsigned).
    const sign = this.#options.sign !== false;
    const now = Date.now();
    const timestamp = Math.floor(now / 1000);
    for (const row of rows) {
      // Never two attempts of one row at once: a row of ours whose lease ran out and that came back
      // in this claim is left to the attempt (or write) already under way.
      if (this.#owned.has(row.id)) continue;
      this.#owned.add(row.id);
      const target = targets.get(row.subscription_id);
      const signature = sign && target && isSendable(target) ? { header: this.#sign(target, timestamp, row.payload), at: now } : null;
      this.#buffer.push({ row, target, leaseEnds, signature });
    }
  }

  #sign(target: DeliveryTarget, timestamp: number, payload: string): string {
    return signatureHeader(signingKeys(this.#ctx.config.secretKey!, target), timestamp, payload);
  }

  /** Starts buffered rows (oldest first) while there are free slots and the writer keeps up. */
  #fill(): void {
    let expired: Buffered[] | null = null;
    let waiting = false;
    for (let i = 0; !this.#stopping && this.#attempts.size < this.#concurrency && this.#unwritten < this.#maxUnwritten && i < this.#buffer.length; ) {
      const item = this.#buffer[i];
      // Its attempt and the write of its result must end inside the lease (a slow stretch of
      // attempts or writes can leave a buffered row without enough of it): give it back instead.
      if (item.leaseEnds - Date.now() < this.#timeoutMs + WRITE_MARGIN_MS) {
        this.#buffer.splice(i, 1);
        (expired ??= []).push(item);
      } else if (this.#failing.has(item.row.subscription_id)) {
        waiting = true;
        i++;
      } else {
        this.#buffer.splice(i, 1);
        this.#launch(item);
      }
    }
    if (expired) void this.#release(expired);
    // A row waits on a failure's write: write it now rather than after the batching delay.
    if (waiting) this.#writer.flush();
    // Running low: let the loop claim more (it is asleep unless a claim is under way).
    if (!this.#drained && this.#buffer.length <= this.#ahead / 2) this.#wakeup?.();
  }

  #launch({ row, target, signature }: Buffered): void {
    this.#started++;
    const work = this.#attempt(row, target, signature).then(
      (result) => {
        this.#ctx.metrics?.webhookAttempt(result);
        this.#unwritten++;
        const failed = result.attempted && !result.ok;
        const subscriptionId = row.subscription_id;
        if (failed) this.#failing.set(subscriptionId, (this.#failing.get(subscriptionId) ?? 0) + 1);
        this.#writer.add(result).then(
          (disabled) => {
            if (disabled) this.#disabled(subscriptionId);
            this.#wakeForRetry(result);
          },
          (error) => webhookLog(this.#ctx).error({ err: error, delivery_id: row.id }, 'webhook result not written'),
        ).finally(() => {
          this.#unwritten--;
          this.#owned.delete(row.id);
          if (failed) {
            const left = this.#failing.get(subscriptionId)! - 1;
            if (left > 0) this.#failing.set(subscriptionId, left);
            else this.#failing.delete(subscriptionId);
          }
          this.#fill();
        });
      },
      (error) => {
        // Not expected (#attempt turns failures into results); the row is attempted again after its lease.
        webhookLog(this.#ctx).error({ err: error, delivery_id: row.id }, 'webhook attempt failed');
        this.#owned.delete(row.id);
      },
    );
    const tracked = work.finally(() => {
      this.#attempts.delete(tracked);
      this.#fill();
    });
    this.#attempts.add(tracked);
  }

  /** Rows of a subscription that was just disabled, claimed before that (or in a claim under way), are not sent (dead-lettered unsent). */
  #disabled(subscriptionId: string): void {
    this.#disabledDuringClaim?.add(subscriptionId);
    for (const item of this.#buffer) {
      if (item.target?.id === subscriptionId) item.target = asInactive(item.target);
    }
  }

  async #release(items: Buffered[]): Promise<void> {
    if (items.length === 0) return;
    try {
      await releaseClaims(this.#ctx.db.kysely, this.#ctx.db.dialect, items.map((item) => item.row));
    } catch (error) {
      // Their leases expire on their own; only the wait is longer.
      webhookLog(this.#ctx).warn({ err: error }, 'claimed webhook rows not released');
    }
    for (const item of items) this.#owned.delete(item.row.id);
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

  /** Resolves on a wake-up (work due, or room in the buffer) or after `ms` (the poll: work may be due). */
  #sleep(ms: number): Promise<void> {
    if (this.#due) return Promise.resolve();
    return new Promise((resolve) => {
      const self = this;
      const timer = setTimeout(() => {
        self.#due = true;
        done();
      }, ms);
      function done() {
        clearTimeout(timer);
        self.#wakeup = null;
        resolve();
      }
      this.#wakeup = done;
    });
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

  async #attempt(delivery: ClaimedDelivery, subscription: DeliveryTarget | undefined, presigned: Presigned | null): Promise<AttemptResult> {
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
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        'x-service-event': delivery.event_type,
        'x-service-event-id': delivery.event_id,
        'x-service-attempt': String(delivery.attempt),
      };
      if (this.#options.sign !== false) {
        const now = Date.now();
        headers['x-service-signature'] =
          presigned && now - presigned.at <= MAX_SIGNATURE_AGE_MS ? presigned.header : this.#sign(subscription, Math.floor(now / 1000), delivery.payload);
      }
      const response = await this.#client.post(this.#parsed(subscription.url), headers, delivery.payload);
      statusCode = response.statusCode;
      responseBody = response.body;
    } catch (error) {
      responseBody = describeFailure(error);
    }
    const ok = statusCode !== null && statusCode >= 200 && statusCode < 300;
    return { ...base, attempted: true, ok, statusCode, responseBody, durationMs: Math.round(performance.now() - started) };
  }
}

/** The target as this worker knows it after disabling it (its rows are dead-lettered unsent). */
const asInactive = (target: DeliveryTarget): DeliveryTarget => ({ ...target, subscription_active: 0 });

/** Whether an attempt would be sent (#attempt dead-letters it unsent otherwise): worth signing ahead. */
function isSendable(target: DeliveryTarget): boolean {
  return target.subscription_active === 1 && target.team_active === 1;
}

/** Deletes delivery-log rows (and events) older than SERVICE_WEBHOOKS_LOG_RETENTION_DAYS, hourly. */
export const webhookLogPurgeTask: WorkerTask = {
  name: 'webhook-log-purge',
  async run(ctx, signal) {
    while (!signal.aborted) {
      try {
        const { deliveries, events } = await purgeDeliveryLogs(ctx.db.kysely, ctx.config.webhooks.logRetentionDays);
        if (deliveries + events > 0) webhookLog(ctx).info({ deliveries, events }, 'webhook delivery logs purged');
      } catch (error) {
        webhookLog(ctx).error({ err: error }, 'webhook log purge failed');
      }
      await sleep(PURGE_INTERVAL_MS, signal);
    }
  },
};
