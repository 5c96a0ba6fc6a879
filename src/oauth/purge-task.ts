// The worker task that deletes expired OAuth rows (tokens, codes, sessions, interactions, device
// polling state, old wrong-code records) a day after they expire. Expired rows are already refused
// by the library; this only keeps the tables small. Several workers may run it at once.
import type { WorkerTask } from '../worker/worker.ts';
import { sleep } from '../worker/worker.ts';
import { deleteExpiredOAuthRows } from './adapter.ts';

export const OAUTH_PURGE_INTERVAL_MS = 10 * 60_000;

export const oauthPurgeTask: WorkerTask = {
  name: 'oauth-purge',
  async run(ctx, signal) {
    while (!signal.aborted) {
      try {
        await deleteExpiredOAuthRows(ctx.db.kysely);
      } catch (error) {
        // A failed round (database briefly away) is retried at the next interval.
        process.stderr.write(`oauth-purge: ${(error as Error).message}\n`);
      }
      await sleep(OAUTH_PURGE_INTERVAL_MS, signal);
    }
  },
};
