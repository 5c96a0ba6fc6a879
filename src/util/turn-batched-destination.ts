// The request log's destination: every line logged during one turn of the event loop is written
// to stdout in one synchronous write at the end of that turn (setImmediate runs after the I/O poll
// that delivered the turn's requests).
//
// Why not pino's asynchronous destination (sonic-boom, sync: false): each of its writes is a trip
// through libuv's thread pool (a futex wake, a thread switch, an eventfd wake-up back), and it
// re-measures its whole pending buffer on every line. At a paced load, where a turn carries one or
// two requests, those costs are paid per request (docs/performance.md, Logging). Neither pino nor
// sonic-boom batches by turn (their minLength/periodicFlush batch by size and time, which delays
// lines at low load), so the batching is written here; the writing itself stays sonic-boom's
// (sync mode: partial writes, EAGAIN on a non-blocking pipe, EPIPE through pino's own handler).
//
// The trade-off, stated in docs/api.md: if the reader of stdout stops reading, the server waits at
// the end of a turn for the pipe to drain, rather than keeping a growing backlog in memory.
import pino from 'pino';

type Sink = ReturnType<typeof pino.destination>;

/** Destinations holding lines of the current turn: written out if the process exits first. */
const pending = new Set<TurnBatchedDestination>();
let exitHookInstalled = false;

export class TurnBatchedDestination {
  readonly #sink: Sink;
  #lines: string[] = [];
  readonly #flushTurn = () => this.flushSync();

  constructor(sink: Sink = pino.destination({ dest: 1, sync: true })) {
    this.#sink = sink;
    if (!exitHookInstalled) {
      exitHookInstalled = true;
      // An exit in the middle of a turn (process.exit after a fatal error) still writes its lines.
      process.on('exit', () => {
        for (const destination of pending) destination.flushSync();
      });
    }
  }

  /** pino's stream interface: queue the line for the end of this turn. */
  write(line: string): boolean {
    if (this.#lines.push(line) === 1) {
      pending.add(this);
      setImmediate(this.#flushTurn);
    }
    return true;
  }

  /** Writes the queued lines now, in one write. */
  flushSync(): void {
    if (this.#lines.length === 0) return;
    const text = this.#lines.length === 1 ? this.#lines[0] : this.#lines.join('');
    this.#lines = [];
    pending.delete(this);
    this.#sink.write(text);
  }

  /** pino's logger.flush(callback). */
  flush(callback?: (error?: Error) => void): void {
    this.flushSync();
    callback?.();
  }
}
