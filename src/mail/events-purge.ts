// The worker task that deletes mail-provider events (mail_events) stored longer ago than
// SERVICE_MAIL_EVENTS_RETENTION_DAYS. Every message sent can bring several events (send, delivery, and
// a bounce or complaint), so the table grows with the mail volume unless something removes them. What
// the events caused stays: a suppression is a row of its own (mail_suppressions, kept with its reason,
// time and event key). Forgetting an event also forgets that its SNS message was seen. That changes
// nothing the intake decides: SNS stops redelivering to an HTTPS endpoint within an hour (a limit of
// its delivery policies), and a redelivery stored again can neither suppress an address twice nor
// undo an operator's release (intake-store.ts).
import type { Kysely } from 'kysely';
import { purgeOlderThan } from '../db/batched-delete.ts';
import type { Database } from '../db/schema.ts';
import { isoAfter } from '../util/time.ts';
import { periodic } from '../worker/periodic.ts';

export const MAIL_EVENTS_PURGE_INTERVAL_MS = 3600_000;

/** Deletes the events stored more than `retentionDays` before `now`, in batches along mail_events_received_idx. */
export function purgeMailEvents(db: Kysely<Database>, retentionDays: number, now = Date.now()): Promise<number> {
  return purgeOlderThan(db, 'mail_events', 'received_at', isoAfter(-retentionDays * 86_400, now));
}

export const mailEventsPurgeTask = periodic({
  name: 'mail-events-purge',
  intervalMs: MAIL_EVENTS_PURGE_INTERVAL_MS,
  round: (ctx) => purgeMailEvents(ctx.db.kysely, ctx.config.mailEventsRetentionDays),
});
