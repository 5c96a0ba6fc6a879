import type { Kysely } from 'kysely';

// Drops webhook_deliveries_created_idx (created_at). Each attempt's result sets its row's created_at
// to the attempt time, so every index on that column moves the row's entry from where it was queued
// to the end: one more page written per index on every result batch, and the WAL (then the
// checkpoint) writes each of them again. The hourly retention purge (purgeDeliveryLogs) needs no
// index of its own: it walks webhook_deliveries_subscription_idx (subscription_id, created_at, id)
// one subscription at a time.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('webhook_deliveries_created_idx').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('webhook_deliveries_created_idx').on('webhook_deliveries').column('created_at').execute();
}
