// The background worker: outbox consumers (webhook deliveries, e-mail) and housekeeping (purges).
// It runs inside `svc serve` by default and as any number of `svc worker` processes. Each capability
// defines its WorkerTasks (periodic.ts for housekeeping) and src/worker-tasks.ts lists them; a task
// runs until its AbortSignal fires, then returns.
import type { AppContext } from '../app-context.ts';

export interface WorkerTask {
  name: string;
  /** Runs until `signal` aborts; must let in-flight work finish (or lease-expire) before resolving. */
  run(ctx: AppContext, signal: AbortSignal): Promise<void>;
}

export interface RunningWorker {
  stop(): Promise<void>;
}

export function startWorker(ctx: AppContext, tasks: readonly WorkerTask[]): RunningWorker {
  const controller = new AbortController();
  const running = tasks.map((task) =>
    task.run(ctx, controller.signal).catch((error) => {
      // A task that dies is logged; the others go on. Its rows stay in the database and are
      // picked up again by the next worker (leases), so nothing is lost.
      process.stderr.write(`worker task ${task.name} failed: ${(error as Error).stack ?? error}\n`);
    }),
  );
  return {
    async stop() {
      controller.abort();
      await Promise.all(running);
    },
  };
}

/** Resolves after `ms`, or at once when the signal aborts or `wake` fires. */
export function sleep(
  ms: number,
  signal: AbortSignal,
  wake?: { once(event: string, fn: () => void): unknown; off(event: string, fn: () => void): unknown },
  event = 'wake',
): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      wake?.off(event, done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    wake?.once(event, done);
  });
}
