// The worker task that deletes expired Idempotency-Key records (SERVICE_IDEMPOTENCY_TTL_HOURS).
// Expired rows are already ignored by requests (a stale key is taken over as fresh); this only
// keeps the table small. Several workers may run it at once: each DELETE is idempotent.
import type { WorkerTask } from '../worker/worker.ts';
import { sleep } from '../worker/worker.ts';
import { purgeExpiredIdempotencyKeys } from './idempotency.ts';

export const IDEMPOTENCY_PURGE_INTERVAL_MS = 10 * 60_000;

export const idempotencyPurgeTask: WorkerTask = {
  name: 'idempotency-purge',
  async run(ctx, signal) {
    while (!signal.aborted) {
      try {
        await purgeExpiredIdempotencyKeys(ctx.db.kysely);
      } catch (error) {
        // A failed round (database briefly away) is retried at the next interval.
        process.stderr.write(`idempotency-purge: ${(error as Error).message}\n`);
      }
      await sleep(IDEMPOTENCY_PURGE_INTERVAL_MS, signal);
    }
  },
};
