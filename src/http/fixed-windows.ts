// The in-process throttle store (memory mode): one fixed window per key, opened by the key's first
// request and lasting the period, exactly as rate-limiter-flexible's RateLimiterMemory counts
// (which the Redis mode still uses as its fallback). Written here because that library's API is
// promise-only: on the hot path of every API request the promise and result objects it makes cost
// about as much as the counting itself; this store answers synchronously. Expired windows are
// swept once per period instead of one timer per key.
import type { RateSpec } from '../config.ts';
import type { RatePolicy, RateResult } from './ratelimit-fields.ts';

interface Window {
  count: number;
  /** ms since the epoch */
  resetsAt: number;
}

export class FixedWindows {
  readonly #limit: number;
  readonly #periodMs: number;
  readonly #policy: RatePolicy;
  readonly #windows = new Map<string, Window>();
  #sweepAt = 0;

  constructor(spec: RateSpec, policy: RatePolicy) {
    this.#limit = spec.limit;
    this.#policy = policy;
    this.#periodMs = spec.windowSeconds * 1000;
  }

  /** Counts one request of `key` (refused ones too, as the library does). */
  consume(key: string, now = Date.now()): RateResult {
    if (now >= this.#sweepAt) this.#sweep(now);
    let window = this.#windows.get(key);
    if (window === undefined || window.resetsAt <= now) {
      window = { count: 0, resetsAt: now + this.#periodMs };
      this.#windows.set(key, window);
    }
    window.count++;
    const allowed = window.count <= this.#limit;
    const seconds = Math.ceil((window.resetsAt - now) / 1000);
    return {
      allowed,
      limit: this.#limit,
      remaining: allowed ? this.#limit - window.count : 0,
      resetSeconds: allowed ? seconds : Math.max(1, seconds),
      policy: this.#policy,
    };
  }

  #sweep(now: number) {
    for (const [key, window] of this.#windows) if (window.resetsAt <= now) this.#windows.delete(key);
    this.#sweepAt = now + this.#periodMs;
  }
}
