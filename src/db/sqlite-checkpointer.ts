// Runs SQLite's WAL checkpoints on a helper thread, with a connection of its own, instead of inside
// a COMMIT on the event loop. A checkpoint copies the WAL back into the database file and fsyncs
// both (synchronous = NORMAL); an fsync can take tens of milliseconds, and SQLite's automatic
// checkpoint runs it inside whichever commit crosses 1,000 WAL pages, stalling every request and
// delivery of the process meanwhile. Under a steady stream of small transactions (a webhook event
// each) those stalls come every few hundred commits and make up the slowest requests.
//
// Durability is unchanged: same synchronous setting, same syncs, only another thread waits for
// them. PASSIVE checkpoints never block the writer or readers.
//
// A PASSIVE checkpoint copies the WAL but never starts it over: the next writer does, and only if
// the whole WAL was copied when it began. Under a steady stream of commits one lands during every
// checkpoint, so that never happens and the file grows as fast as commits are written. Once the
// WAL holds RESTART_AFTER_FRAMES frames, the thread runs a RESTART checkpoint right after its
// PASSIVE one: it takes the write lock (never waiting for it: busy, it tries again next time),
// copies the few frames written meanwhile, and makes the next commit start the WAL over. The event
// loop's commits wait for that lock meanwhile, briefly and once per RESTART_AFTER_FRAMES of WAL.
// This is the one connection without a busy timeout, on purpose: a RESTART that waited for the
// write lock would then keep it while it waits for readers, stalling the writers of every process;
// a checkpoint skipped is only a checkpoint later.
//
// The thread starts a few seconds after the database opens, so short commands (`svc migrate`, CLI)
// and the start of `svc serve` never pay for it and keep SQLite's automatic checkpoints. Once the
// thread runs, the main connection's automatic checkpoint is turned off; if the thread ever stops,
// it is turned back on.
import { Worker } from 'node:worker_threads';
import type { DatabaseSync } from 'node:sqlite';
import { LOWER_THIS_THREAD_PRIORITY } from '../util/thread-priority.ts';

const START_AFTER_MS = 2_000;
const INTERVAL_MS = 100;
/** 64 MiB of WAL with SQLite's default 4 KiB pages. */
const RESTART_AFTER_FRAMES = 16_384;
/** SQLite's default wal_autocheckpoint, restored when the thread is gone. */
const AUTOCHECKPOINT_PAGES = 1000;
const STOP_TIMEOUT_MS = 5_000;

// Plain JavaScript: a worker thread evaluated from a string has no TypeScript stripping. At a lower
// priority than the event loop (src/util/thread-priority.ts): checkpoints can wait, requests cannot.
// The priority matters for the thread's garbage collections too: V8 shrinks a mostly idle isolate
// with full collections, which on a shared core would otherwise take time slices from requests.
const THREAD = `
${LOWER_THIS_THREAD_PRIORITY}
const { DatabaseSync } = require('node:sqlite');
const { parentPort, workerData } = require('node:worker_threads');
const db = new DatabaseSync(workerData.location, { timeout: 0 });
let passive = null;
let restart = null;
const timer = setInterval(() => {
  try {
    // Prepared here, not at start: preparing reads the schema, and a reader can be refused for a
    // moment (another connection switching the file to WAL or recovering it); then this tries again
    // next time instead of ending.
    passive ??= db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
    restart ??= db.prepare('PRAGMA wal_checkpoint(RESTART)');
    // Each answers { busy, log: frames in the WAL, checkpointed }. Busy (another checkpoint
    // running, the write lock held) or an error: next time.
    if (passive.get().log >= workerData.restartAfterFrames) restart.get();
  } catch {}
}, workerData.intervalMs);
parentPort.on('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
parentPort.postMessage('ready');
`;

export interface Checkpointer {
  /**
   * Stops checkpointing. The thread closes its connection and exits on its own; the promise
   * resolves once it has, so that nothing touches the database files after the database is closed
   * (a thread started just before a close still opens the file, then closes it at once).
   */
  stop(): Promise<void>;
}

export interface CheckpointerOptions {
  startAfterMs?: number;
  /** The WAL's size, in frames (pages), from which the thread starts it over (tests set it low). */
  restartAfterFrames?: number;
}

export function startCheckpointer(
  database: DatabaseSync,
  location: string,
  options: CheckpointerOptions = {},
): Checkpointer {
  const { startAfterMs = START_AFTER_MS, restartAfterFrames = RESTART_AFTER_FRAMES } = options;
  let worker: Worker | null = null;
  let stopped = false;
  const autocheckpoint = (pages: number) => {
    if (!stopped && database.isOpen) database.exec(`PRAGMA wal_autocheckpoint = ${pages}`);
  };
  const timer = setTimeout(() => {
    if (stopped) return;
    worker = new Worker(THREAD, { eval: true, workerData: { location, intervalMs: INTERVAL_MS, restartAfterFrames } });
    worker.unref();
    worker.once('message', () => autocheckpoint(0));
    worker.on('error', () => {});
    worker.once('exit', () => {
      worker = null;
      autocheckpoint(AUTOCHECKPOINT_PAGES);
    });
  }, startAfterMs);
  timer.unref();
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
      const running = worker;
      if (!running) return Promise.resolve();
      // Referenced until it exits: code awaiting the close runs before the process ends. A thread
      // that does not exit in time (a checkpoint stuck on the disk) is terminated.
      running.ref();
      const deadline = setTimeout(() => void running.terminate(), STOP_TIMEOUT_MS).unref();
      const exited = new Promise<void>((resolve) =>
        running.once('exit', () => {
          clearTimeout(deadline);
          resolve();
        }),
      );
      running.postMessage('stop');
      return exited;
    },
  };
}
