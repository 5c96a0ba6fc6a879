// How much a delivery worker claims ahead of its attempts, and how many results it writes at once.
import { performance } from 'node:perf_hooks';

/** The most rows one claim takes. */
export const MAX_CLAIM = 200;
/** A row starts only with this much of its lease left beyond the delivery timeout (its result's write). */
export const WRITE_MARGIN_MS = 1000;

/**
 * The fewest rows to hold claimed beyond the running attempts: twice the concurrency (at least 16,
 * so a worker of one slot still claims several rows per statement; at most one claim's worth).
 * None when the lease cannot cover a wait of one attempt besides the row's own attempt and write;
 * a buffered row whose lease has run too short by the time a slot frees is given back (the
 * worker's #fill). Under load the buffer grows beyond this floor with the worker's rate (AHEAD_MS).
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

/** The rows to hold claimed beyond the running attempts now: claimAhead's floor, raised with the rate. */
export class ClaimAhead {
  readonly #floor: number;
  #size: number;
  /** Attempts started since #since (for the rate that sizes the buffer). */
  #started = 0;
  #since = performance.now();

  constructor(floor: number) {
    this.#floor = this.#size = floor;
  }

  get size(): number {
    return this.#size;
  }

  /** Counts an attempt started. */
  started(): void {
    this.#started++;
  }

  /** Once per RATE_WINDOW_MS: the size for AHEAD_MS at the rate of attempts just seen. */
  resize(): void {
    const now = performance.now();
    const elapsed = now - this.#since;
    if (elapsed < RATE_WINDOW_MS || this.#floor === 0) return;
    const wanted = Math.ceil((this.#started * AHEAD_MS) / elapsed);
    this.#size = Math.min(Math.max(wanted, this.#floor), MAX_CLAIM);
    this.#started = 0;
    this.#since = now;
  }
}

/**
 * Results are written once this many wait (or WRITE_DELAY_MS after the first): at least 64, so
 * that under load each write statement carries many results (its fixed cost, a round trip and
 * a plan, dwarfs a row's); when the rate is low, WRITE_DELAY_MS bounds the wait instead.
 */
export const writeBatch = (concurrency: number) => Math.min(Math.max(concurrency, 64), 250);
export const WRITE_DELAY_MS = 5;
