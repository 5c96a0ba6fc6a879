// argon2id on a few dedicated worker threads that run at a lower CPU priority (nice 10, see
// src/util/thread-priority.ts) than the event loop. node:crypto's asynchronous argon2 runs on the
// libuv pool at the event loop's own priority: where the process has one core (a container's limit,
// a pinned process), each hash (tens of ms) then takes time slices from request handling, and every
// API request waits behind the logins being hashed. At nice 10 a
// waking event loop preempts the hashing at once; logins slow down under load but never stall.
// Written here rather than taken from a pool library: the priority has to be set from inside each
// thread (Linux applies setpriority to the thread id given), which pools do not offer.
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { LOWER_THIS_THREAD_PRIORITY } from '../util/thread-priority.ts';

export interface Argon2Params {
  message: string;
  nonce: Buffer;
  memory: number;
  passes: number;
  parallelism: number;
  tagLength: number;
}

const THREADS = Math.max(1, Math.min(4, os.availableParallelism()));

// CommonJS source evaluated in the thread (the same text runs from src/ and from dist/).
const THREAD_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { argon2Sync } = require('node:crypto');
${LOWER_THIS_THREAD_PRIORITY}
parentPort.on('message', ({ id, params }) => {
  try {
    const hash = argon2Sync('argon2id', params);
    parentPort.postMessage({ id, hash }, [hash.buffer]);
  } catch (error) {
    parentPort.postMessage({ id, error: error.message });
  }
});
`;

interface Job {
  id: number;
  params: Argon2Params;
  resolve: (hash: Buffer) => void;
  reject: (error: Error) => void;
}

interface Thread {
  worker: Worker;
  job: Job | null;
}

const idle: Thread[] = [];
const queue: Job[] = [];
let started = 0;
let nextId = 0;

function startThread(): Thread {
  started++;
  // Named, so that the hashing shows per thread in top -H and /proc/<pid>/task (the benchmark reads it there
  // to show that issuance hashes off the event loop).
  const thread: Thread = { worker: new Worker(THREAD_SOURCE, { eval: true, name: 'argon2' }), job: null };
  thread.worker.on('message', (message: { id: number; hash?: Uint8Array; error?: string }) => {
    const job = thread.job!;
    thread.job = null;
    if (message.error !== undefined) job.reject(new Error(message.error));
    else job.resolve(Buffer.from(message.hash!.buffer, message.hash!.byteOffset, message.hash!.byteLength));
    take(thread);
  });
  thread.worker.on('error', (error) => {
    // A thread that died fails its job; a new one is started for the next.
    started--;
    thread.job?.reject(error);
    thread.job = null;
    const at = idle.indexOf(thread);
    if (at >= 0) idle.splice(at, 1);
    if (queue.length > 0) take(startThread());
  });
  return thread;
}

/** Gives the thread the next job, or parks it. An idle thread does not keep the process alive. */
function take(thread: Thread) {
  const job = queue.shift();
  if (!job) {
    thread.worker.unref();
    idle.push(thread);
    return;
  }
  thread.job = job;
  thread.worker.ref();
  thread.worker.postMessage({ id: job.id, params: job.params });
}

export function argon2id(params: Argon2Params): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    queue.push({ id: nextId++, params, resolve, reject });
    const thread = idle.pop() ?? (started < THREADS ? startThread() : null);
    if (thread) take(thread);
  });
}
