// The worker task that deletes audit-log entries older than SERVICE_AUDIT_RETENTION_DAYS. Several
// workers may run it at once: each DELETE is idempotent.
import { periodic } from '../worker/periodic.ts';
import { purgeAuditEntries } from './store.ts';

export const AUDIT_PURGE_INTERVAL_MS = 3600_000;

export const auditPurgeTask = periodic({
  name: 'audit-purge',
  intervalMs: AUDIT_PURGE_INTERVAL_MS,
  round: (ctx) => purgeAuditEntries(ctx.db.kysely, ctx.config.auditRetentionDays),
});
