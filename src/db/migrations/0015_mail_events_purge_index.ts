import type { Kysely } from 'kysely';

// mail_events (received_at): the retention purge (mail/events-purge.ts) deletes the rows stored before
// its cutoff in batches along it, oldest first, reading about as many index entries as it deletes.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('mail_events_received_idx').on('mail_events').column('received_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('mail_events_received_idx').execute();
}
