// Background worker threads (password hashing, SQLite checkpoints) run at a lower CPU priority
// than the event loop: where the process has one core (a container's limit, a pinned process), a
// thread at the event loop's own priority takes every other time slice while it runs — its work
// and its isolate's garbage collections alike — and request latency grows with it. At nice 10 a
// waking event loop preempts the thread at once, and the thread still gets about a tenth of a
// saturated core, so background work slows down under load but never stops.

const BACKGROUND_THREAD_NICE = 10;

/**
 * CommonJS source that lowers the priority of the thread it runs in, for the start of a thread
 * evaluated from a string. Linux applies setpriority to the thread id given (/proc/thread-self is
 * "<pid>/task/<tid>"); elsewhere, or when not permitted, the thread keeps the normal priority.
 */
export const LOWER_THIS_THREAD_PRIORITY = `
try {
  const tid = Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop());
  require('node:os').setPriority(tid, ${BACKGROUND_THREAD_NICE});
} catch {}
`;
