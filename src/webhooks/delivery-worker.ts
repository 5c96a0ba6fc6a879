// The delivery loop of one worker process: three stages run side by side, so no delivery slot
// waits on the database. Claim: due rows are leased in batches into a small local buffer, ahead of
// need. Attempt: up to SERVICE_WEBHOOKS_CONCURRENCY at once; a slot takes the next buffered row the
// moment its attempt ends. Write: results go to the micro-batched writer (results.ts) without
// holding a slot; a row stays leased until its result is written, and too many unwritten results
// pause new attempts (back-pressure). It sleeps until an emitted event wakes it (wake.ts) or the poll
// interval passes. On abort it starts nothing more, gives back claimed rows it never started and
// writes every finished result; a row it never finishes is claimed again when its lease expires.
// delivery-sender.ts sends each attempt, signed by delivery-signer.ts.
import type { AppContext } from '../app-context.ts';
import type { WorkerTask } from '../worker/worker.ts';
import { ClaimAhead, MAX_CLAIM, WRITE_DELAY_MS, WRITE_MARGIN_MS, claimAhead, writeBatch } from './claim-sizing.ts';
import { DeliverySender, isSendable } from './delivery-sender.ts';
import { DeliverySigner, type Signature } from './delivery-signer.ts';
import { webhookLog, warnIfGuardRelaxed } from './log.ts';
import type { AttemptResult, ClaimedDelivery, DeliveryTarget } from './queue.ts';
import { asInactive, claimDue, releaseClaims } from './queue.ts';
import { ResultWriter } from './results.ts';
import { WAKE_EVENT, WakeListener } from './wake.ts';

const POLL_MS = 1000;

export interface DeliveryWorkerOptions {
  ca?: string | Buffer | Array<string | Buffer>; // extra CA certificates to trust (tests with a private CA)
}

export function webhookDeliveryTask(options: DeliveryWorkerOptions = {}): WorkerTask {
  return { name: 'webhook-deliveries', run: (ctx, signal) => new DeliveryLoop(ctx, options).run(signal) };
}

/** A claimed row waiting for a slot, with its subscription, when its lease ends, and its signature. */
interface Buffered {
  row: ClaimedDelivery;
  target: DeliveryTarget | undefined;
  leaseEnds: number;
  signature: Signature | null;
}

class DeliveryLoop {
  readonly #ctx: AppContext;
  readonly #signer: DeliverySigner;
  readonly #sender: DeliverySender;
  readonly #writer: ResultWriter;
  readonly #concurrency: number;
  /** How many rows to hold claimed beyond the running attempts. */
  readonly #ahead: ClaimAhead;
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
  /** Woken for work (an emitted event, a retry coming due, the poll): the queue may have new due rows. */
  #due = true;
  /** PostgreSQL only: NOTIFY wakes this worker whichever process queued the rows. */
  readonly #listener: WakeListener | null;
  #wakeup: (() => void) | null = null;
  /**
   * Subscriptions this worker disabled while a claim was under way. On PostgreSQL that claim may
   * have read them before the disable committed: its rows of them must not be sent either.
   */
  #disabledDuringClaim: Set<string> | null = null;

  constructor(ctx: AppContext, options: DeliveryWorkerOptions) {
    this.#ctx = ctx;
    const settings = ctx.config.webhooks;
    this.#signer = new DeliverySigner(ctx.config.secretKey!);
    this.#sender = new DeliverySender(settings, this.#signer, options.ca);
    this.#listener = ctx.db.pool ? new WakeListener(ctx.db.pool, this.#kick, webhookLog(ctx)) : null;
    this.#writer = new ResultWriter(ctx, { batch: writeBatch(settings.concurrency), delayMs: WRITE_DELAY_MS });
    this.#concurrency = settings.concurrency;
    this.#leaseMs = settings.leaseSeconds * 1000;
    this.#timeoutMs = settings.deliveryTimeoutMs;
    this.#ahead = new ClaimAhead(claimAhead(this.#concurrency, this.#leaseMs, this.#timeoutMs));
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
        await this.#listener?.ensure();
        if (this.#due) {
          this.#due = false;
          this.#drained = false;
        }
        const wanted = this.#wanted();
        if (wanted > 0) {
          try {
            const leaseEnds = Date.now() + this.#leaseMs;
            const disabled = (this.#disabledDuringClaim = new Set());
            const claim = await claimDue(ctx.db, wanted, ctx.config.webhooks.leaseSeconds).finally(
              () => (this.#disabledDuringClaim = null),
            );
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
        // Wait for the buffer to run low (an attempt ending wakes), an emitted event, or the poll interval.
        await this.#sleep(POLL_MS);
      }
    } finally {
      this.#stopping = true;
      ctx.wake.off(WAKE_EVENT, this.#kick);
      await this.#release(this.#buffer.splice(0));
      await Promise.allSettled(this.#attempts);
      await this.#writer.drain();
      await this.#sender.close();
      await this.#listener?.close();
    }
  }

  /**
   * How many rows to claim now (0: none). The buffer is refilled when it is down to half its size,
   * with enough rows for every free slot and a full buffer, and at least a quarter of the slots (or
   * whatever is missing) per claim under load, so one statement feeds many attempts.
   */
  #wanted(): number {
    this.#ahead.resize();
    const ahead = this.#ahead.size;
    if (this.#drained || this.#unwritten >= this.#maxUnwritten) return 0;
    const held = this.#attempts.size + this.#buffer.length;
    if (this.#buffer.length > ahead / 2) return 0;
    const room = this.#concurrency + ahead - held;
    const minBatch = held === 0 ? 1 : Math.max(1, Math.floor(this.#concurrency / 4));
    return room < minBatch ? 0 : Math.min(room, MAX_CLAIM);
  }

  #enqueue(rows: ClaimedDelivery[], targets: Map<string, DeliveryTarget>, leaseEnds: number): void {
    // Signed here, the whole claim in one go: an HMAC-SHA256 made one at a time between network
    // I/O costs several times what it costs in a run of them (OpenSSL's state is cold by then)
    // (docs/performance.md, Signed ÷ unsigned).
    const now = Date.now();
    for (const row of rows) {
      // Never two attempts of one row at once: a row of ours whose lease ran out and that came back
      // in this claim is left to the attempt (or write) already under way.
      if (this.#owned.has(row.id)) continue;
      this.#owned.add(row.id);
      const target = targets.get(row.subscription_id);
      const signature = target && isSendable(target) ? this.#signer.sign(target, row.event_id, row.payload, now) : null;
      this.#buffer.push({ row, target, leaseEnds, signature });
    }
  }

  /** Starts buffered rows (oldest first) while there are free slots and the writer keeps up. */
  #fill(): void {
    let expired: Buffered[] | null = null;
    let waiting = false;
    for (
      let i = 0;
      !this.#stopping &&
      this.#attempts.size < this.#concurrency &&
      this.#unwritten < this.#maxUnwritten &&
      i < this.#buffer.length;
    ) {
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
    if (!this.#drained && this.#buffer.length <= this.#ahead.size / 2) this.#wakeup?.();
  }

  #launch({ row, target, signature }: Buffered): void {
    this.#ahead.started();
    const work = this.#sender.attempt(row, target, signature).then(
      (result) => {
        this.#ctx.metrics?.webhookAttempt(result);
        this.#unwritten++;
        const failed = result.attempted && !result.ok;
        const subscriptionId = row.subscription_id;
        if (failed) this.#failing.set(subscriptionId, (this.#failing.get(subscriptionId) ?? 0) + 1);
        this.#writer
          .add(result)
          .then(
            (disabled) => {
              if (disabled) this.#disabled(subscriptionId);
              this.#wakeForRetry(result);
            },
            (error) => webhookLog(this.#ctx).error({ err: error, delivery_id: row.id }, 'webhook result not written'),
          )
          .finally(() => {
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
      await releaseClaims(
        this.#ctx.db.kysely,
        this.#ctx.db.dialect,
        items.map((item) => item.row),
      );
    } catch (error) {
      // Their leases expire on their own; only the wait is longer.
      webhookLog(this.#ctx).warn({ err: error }, 'claimed webhook rows not released');
    }
    for (const item of items) this.#owned.delete(item.row.id);
  }

  /** Resolves on a wake-up (work due, or room in the buffer) or after `ms` (the poll: work may be due). */
  #sleep(ms: number): Promise<void> {
    if (this.#due) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#wakeup = null;
        resolve();
      };
      const timer = setTimeout(() => {
        this.#due = true;
        done();
      }, ms);
      this.#wakeup = done;
    });
  }

  /** A retry due sooner than the next poll wakes the loop on time (short schedules, tests). */
  #wakeForRetry(result: AttemptResult) {
    const { retryDelays, maxRetries } = this.#ctx.config.webhooks;
    if (result.ok || !result.attempted || result.delivery.attempt >= maxRetries) return;
    const delayMs = retryDelays[result.delivery.attempt] * 1000;
    if (delayMs < POLL_MS) setTimeout(this.#kick, delayMs + 5).unref();
  }
}
