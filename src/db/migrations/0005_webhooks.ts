import type { Kysely } from 'kysely';
import { flag, notNull, sql, withSerialId } from './helpers.ts';

// Webhook subscriptions and their delivery log. The log is also the delivery queue (transactional
// outbox): a `pending` row is an attempt due at next_retry_at, claimed by a worker with a lease
// (locked_until + lease_token).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('webhook_subscriptions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('team_id', 'text', (c) => c.notNull().references('teams.id').onDelete('cascade'))
    .addColumn('url', 'text', notNull)
    .addColumn('events', 'text', notNull)
    .addColumn('secret_encrypted', 'text', notNull)
    .addColumn('previous_secret_encrypted', 'text')
    .addColumn('previous_secret_expires_at', 'text')
    .addColumn('is_active', 'integer', flag(1))
    .addColumn('consecutive_failures', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('disabled_at', 'text')
    .addColumn('disabled_reason', 'text')
    .addColumn('created_at', 'text', notNull)
    .addColumn('updated_at', 'text', notNull)
    .execute();
  await db.schema
    .createIndex('webhook_subscriptions_team_idx')
    .on('webhook_subscriptions')
    .columns(['team_id', 'created_at'])
    .execute();

  await withSerialId(db, db.schema.createTable('webhook_deliveries'))
    .addColumn('subscription_id', 'text', (c) => c.notNull().references('webhook_subscriptions.id').onDelete('cascade'))
    .addColumn('event_id', 'text', notNull)
    .addColumn('event_type', 'text', notNull)
    .addColumn('payload', 'text', notNull)
    .addColumn('attempt', 'integer', notNull)
    .addColumn('status', 'text', (c) =>
      c.notNull().check(sql`status in ('pending', 'success', 'failed', 'dead_letter')`),
    )
    .addColumn('next_retry_at', 'text')
    .addColumn('status_code', 'integer')
    .addColumn('response_body', 'text')
    .addColumn('duration_ms', 'integer')
    .addColumn('locked_until', 'text')
    .addColumn('lease_token', 'text')
    .addColumn('created_at', 'text', notNull)
    .execute();
  // The queue: due pending rows, oldest first. Partial, so it stays as small as the backlog.
  await sql`create index webhook_deliveries_due_idx on webhook_deliveries (next_retry_at) where status = 'pending'`.execute(
    db,
  );
  // The log API pages by (created_at, id) within a subscription.
  await db.schema
    .createIndex('webhook_deliveries_subscription_idx')
    .on('webhook_deliveries')
    .columns(['subscription_id', 'created_at', 'id'])
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_event_idx')
    .on('webhook_deliveries')
    .columns(['subscription_id', 'event_id'])
    .execute();
  await db.schema.createIndex('webhook_deliveries_created_idx').on('webhook_deliveries').column('created_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('webhook_deliveries').execute();
  await db.schema.dropTable('webhook_subscriptions').execute();
}
