// The shape of every housekeeping task: a round now, then one every interval until the worker stops.
import type { AppContext } from '../app-context.ts';
import { sleep, type WorkerTask } from './worker.ts';

export interface PeriodicOptions {
  name: string;
  intervalMs: number;
  /** One round of the work. Rounds are idempotent: any number of workers may run them at once. */
  round(ctx: AppContext): Promise<unknown>;
  /** Reports a failed round; by default one line on stderr naming the task. */
  failed?(ctx: AppContext, error: unknown): void;
}

const failedOnStderr = (name: string) => (_ctx: AppContext, error: unknown) =>
  process.stderr.write(`${name}: ${(error as Error).message}\n`);

/** A failed round (the database briefly away) is reported and the work tried again at the next interval. */
export function periodic({ name, intervalMs, round, failed = failedOnStderr(name) }: PeriodicOptions): WorkerTask {
  return {
    name,
    async run(ctx, signal) {
      while (!signal.aborted) {
        try {
          await round(ctx);
        } catch (error) {
          failed(ctx, error);
        }
        await sleep(intervalMs, signal);
      }
    },
  };
}
