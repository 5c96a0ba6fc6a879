import type { Kysely } from 'kysely';
import { notNull, withSerialId } from './helpers.ts';

// Idempotency-Key records (src/http/idempotency.ts): one row per (user, method, path, key). A row
// with a null status_code is a reservation held by a request still running (until locked_until);
// otherwise it holds the stored response until expires_at. The unique index is what makes the
// reservation atomic across processes.
export async function up(db: Kysely<unknown>): Promise<void> {
  await withSerialId(db, db.schema.createTable('idempotency_keys'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('method', 'text', notNull)
    .addColumn('path', 'text', notNull)
    .addColumn('idempotency_key', 'text', notNull)
    .addColumn('fingerprint', 'text', notNull)
    .addColumn('status_code', 'integer')
    .addColumn('response_body', 'text')
    .addColumn('content_type', 'text')
    .addColumn('location', 'text')
    .addColumn('locked_until', 'text')
    .addColumn('created_at', 'text', notNull)
    .addColumn('expires_at', 'text', notNull)
    .addUniqueConstraint('idempotency_keys_scope_unique', ['user_id', 'method', 'path', 'idempotency_key'])
    .execute();
  await db.schema.createIndex('idempotency_keys_expires_idx').on('idempotency_keys').column('expires_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('idempotency_keys').execute();
}
