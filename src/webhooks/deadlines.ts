// Per-attempt deadlines on one timer. Every delivery attempt is bounded as a whole (resolution,
// connection, request, answer) by SERVICE_WEBHOOKS_DELIVERY_TIMEOUT; AbortSignal.timeout() per
// attempt would cost a native timer, a signal kept in a weak set and undici's listener bookkeeping
// for an EventTarget, a sizeable share of a delivery to a fast receiver. Every attempt of a client
// has the same timeout, so deadlines
// expire in the order they were set: one timer, armed for the oldest open deadline, is enough
// (times are performance.now(), monotonic: a wall-clock step cannot reorder them).
//
// undici accepts an EventEmitter as a request's `signal` (it calls once/removeListener and reads
// `aborted`/`reason`), so a Deadline is one: small, and aborted by the sweep.
import { EventEmitter } from 'node:events';

/** The reason an expired attempt is aborted with: the same error AbortSignal.timeout() gives. */
const timedOut = () => new DOMException('The operation was aborted due to timeout', 'TimeoutError');

export class Deadline extends EventEmitter {
  aborted = false;
  reason: unknown = undefined;
  readonly #owner: Deadlines;
  /** performance.now() at which the attempt is aborted. */
  readonly at: number;

  constructor(owner: Deadlines, at: number) {
    super();
    this.#owner = owner;
    this.at = at;
  }

  /** The attempt is over: its deadline no longer needs watching. */
  clear(): void {
    this.#owner.clear(this);
  }

  /** Called by the sweep: rejects what waits on this attempt with a TimeoutError. */
  expire(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = timedOut();
    this.emit('abort');
  }

  /** Rejects with the timeout if the deadline passes before `promise` settles. */
  race<T>(promise: Promise<T>): Promise<T> {
    if (this.aborted) return Promise.reject(this.reason);
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => reject(this.reason);
      this.once('abort', onAbort);
      promise.then(
        (value) => {
          this.removeListener('abort', onAbort);
          resolve(value);
        },
        (error) => {
          this.removeListener('abort', onAbort);
          reject(error);
        },
      );
    });
  }
}

export class Deadlines {
  readonly #timeoutMs: number;
  /** Open deadlines; a Set keeps insertion order, which is expiry order (one timeout for all). */
  readonly #open = new Set<Deadline>();
  #timer: NodeJS.Timeout | null = null;

  constructor(timeoutMs: number) {
    this.#timeoutMs = timeoutMs;
  }

  /** A deadline `timeoutMs` from now; clear() it when the attempt ends. */
  start(): Deadline {
    const deadline = new Deadline(this, performance.now() + this.#timeoutMs);
    this.#open.add(deadline);
    this.#arm();
    return deadline;
  }

  clear(deadline: Deadline): void {
    this.#open.delete(deadline);
  }

  // The timer is armed for the oldest open deadline; when it fires after that attempt ended (the
  // usual case), it sweeps nothing and re-arms for the oldest one still open: about one wake-up
  // per timeout period, whatever the delivery rate.
  #arm(): void {
    if (this.#timer || this.#open.size === 0) return;
    const oldest = this.#open.values().next().value!;
    this.#timer = setTimeout(this.#sweep, Math.max(0, oldest.at - performance.now()));
    // Like AbortSignal.timeout's timer: it never keeps the process alive on its own.
    this.#timer.unref();
  }

  readonly #sweep = () => {
    this.#timer = null;
    const now = performance.now();
    for (const deadline of this.#open) {
      if (deadline.at > now) break;
      this.#open.delete(deadline);
      deadline.expire();
    }
    this.#arm();
  };
}
