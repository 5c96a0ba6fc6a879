import type { Kysely } from 'kysely';
import { notNull, sql, withSerialId } from './helpers.ts';

// Mail: the outgoing-mail outbox, the provider's delivery events (append-only) and the suppression list.
export async function up(db: Kysely<unknown>): Promise<void> {
  // One row per message any part of the app sends. Written in the caller's transaction (status queued),
  // then sent by the worker, which records the outcome on the same row.
  await withSerialId(db, db.schema.createTable('mail_outbox'))
    .addColumn('to_addresses', 'text', notNull)
    .addColumn('cc_addresses', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('bcc_addresses', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('subject', 'text', notNull)
    .addColumn('body_text', 'text', notNull)
    .addColumn('body_html', 'text')
    .addColumn('status', 'text', (c) =>
      c.notNull().check(sql`status in ('queued', 'sending', 'sent', 'suppressed', 'failed')`),
    )
    .addColumn('suppressed_recipients', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('error', 'text')
    .addColumn('transport_message_id', 'text')
    .addColumn('locked_until', 'text')
    .addColumn('created_at', 'text', notNull)
    .addColumn('updated_at', 'text', notNull)
    .addColumn('sent_at', 'text')
    .execute();
  await db.schema.createIndex('mail_outbox_status_idx').on('mail_outbox').columns(['status', 'id']).execute();

  // Provider events, one row per recipient. event_key is the SNS MessageId, or `<MessageId>#<index>` when the
  // notification names several recipients; its unique index makes a redelivered notification insert nothing.
  await withSerialId(db, db.schema.createTable('mail_events'))
    .addColumn('event_key', 'text', notNull)
    .addColumn('sns_message_id', 'text', notNull)
    .addColumn('provider_message_id', 'text')
    .addColumn('recipient_index', 'integer', notNull)
    .addColumn('email', 'text')
    .addColumn('event_type', 'text', notNull)
    .addColumn('bounce_type', 'text')
    .addColumn('bounce_subtype', 'text')
    .addColumn('complaint_type', 'text')
    .addColumn('suppressed', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('occurred_at', 'text', notNull)
    .addColumn('topic_arn', 'text', notNull)
    .addColumn('detail', 'text', notNull)
    .addColumn('received_at', 'text', notNull)
    .execute();
  await db.schema.createIndex('mail_events_key_unique').on('mail_events').column('event_key').unique().execute();
  await db.schema.createIndex('mail_events_email_idx').on('mail_events').columns(['email', 'occurred_at']).execute();

  // Suppression episodes: a row per time an address was suppressed; released_* are set by an operator.
  // At most one active (unreleased) row per address; released rows stay as history.
  await withSerialId(db, db.schema.createTable('mail_suppressions'))
    .addColumn('email', 'text', notNull)
    .addColumn('reason', 'text', (c) => c.notNull().check(sql`reason in ('bounce', 'complaint')`))
    .addColumn('event_key', 'text')
    .addColumn('occurred_at', 'text', notNull)
    .addColumn('created_at', 'text', notNull)
    .addColumn('released_at', 'text')
    .addColumn('released_by', 'text')
    .addColumn('release_reason', 'text')
    .execute();
  await sql`create unique index mail_suppressions_active_unique on mail_suppressions (email) where released_at is null`.execute(
    db,
  );
  await db.schema
    .createIndex('mail_suppressions_email_idx')
    .on('mail_suppressions')
    .columns(['email', 'released_at'])
    .execute();
  await db.schema
    .createIndex('mail_suppressions_created_idx')
    .on('mail_suppressions')
    .columns(['created_at', 'id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['mail_suppressions', 'mail_events', 'mail_outbox']) await db.schema.dropTable(table).execute();
}
