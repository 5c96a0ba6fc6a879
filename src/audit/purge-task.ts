// The worker task that deletes audit-log entries older than SERVICE_AUDIT_RETENTION_DAYS. Several
// workers may run it at once: each DELETE is idempotent.
import type { WorkerTask } from '../worker/worker.ts';
import { sleep } from '../worker/worker.ts';
import { purgeAuditEntries } from './store.ts';

export const AUDIT_PURGE_INTERVAL_MS = 3600_000;

export const auditPurgeTask: WorkerTask = {
  name: 'audit-purge',
  async run(ctx, signal) {
    while (!signal.aborted) {
      try {
        await purgeAuditEntries(ctx.db.kysely, ctx.config.auditRetentionDays);
      } catch (error) {
        // A failed round (database briefly away) is retried at the next interval.
        process.stderr.write(`audit-purge: ${(error as Error).message}\n`);
      }
      await sleep(AUDIT_PURGE_INTERVAL_MS, signal);
    }
  },
};
