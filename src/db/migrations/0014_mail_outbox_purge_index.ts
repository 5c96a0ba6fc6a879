import { sql, type Kysely } from 'kysely';

// mail_outbox (updated_at) of finished rows (sent, suppressed, failed): the outbox purge deletes
// them in batches along it, oldest first, reading about as many index entries as it deletes. Partial,
// as webhook_deliveries_finished_idx: the queue's rows, updated by every claim, cost it nothing. The
// predicate names the statuses that are not finished: written as `status in (…finished)`, SQLite's
// planner reads the purge through the status index instead and sorts what it finds.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('mail_outbox_finished_idx')
    .on('mail_outbox')
    .column('updated_at')
    .where(sql.ref('status'), '<>', sql.lit('queued'))
    .where(sql.ref('status'), '<>', sql.lit('sending'))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('mail_outbox_finished_idx').execute();
}
