import type { Kysely } from 'kysely';
import { notNull, withSerialId } from './helpers.ts';

// OAuth 2.0 authorization server storage (src/oauth, oidc-provider).
// - oauth_models: one table for every oidc-provider model (Client, Grant, AccessToken, RefreshToken,
//   AuthorizationCode, DeviceCode, Session, Interaction, …), keyed by (model, id), with a column per
//   secondary lookup the library makes (grant id, user code, session uid) and the expiry/consumption
//   times as columns so expiry is a WHERE clause and cleanup an indexed DELETE.
// - oauth_consents: the grant a user gave a client, so consent is not asked again in a new session.
// - oauth_device_polls: when a device code was last polled and its current interval (RFC 8628 slow_down).
// - oauth_user_code_failures: wrong user codes typed at /o/device/, counted per user and per address.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('oauth_models')
    .addColumn('model', 'text', notNull)
    .addColumn('id', 'text', notNull)
    .addColumn('payload', 'text', notNull)
    .addColumn('grant_id', 'text')
    .addColumn('user_code', 'text')
    .addColumn('uid', 'text')
    .addColumn('expires_at', 'text')
    .addColumn('consumed_at', 'text')
    .addPrimaryKeyConstraint('oauth_models_pk', ['model', 'id'])
    .execute();
  await db.schema.createIndex('oauth_models_grant_idx').on('oauth_models').columns(['grant_id']).execute();
  await db.schema
    .createIndex('oauth_models_user_code_idx')
    .on('oauth_models')
    .columns(['model', 'user_code'])
    .execute();
  await db.schema.createIndex('oauth_models_uid_idx').on('oauth_models').columns(['model', 'uid']).execute();
  await db.schema.createIndex('oauth_models_expires_idx').on('oauth_models').columns(['expires_at']).execute();

  await db.schema
    .createTable('oauth_consents')
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('client_id', 'text', notNull)
    .addColumn('grant_id', 'text', notNull)
    .addColumn('updated_at', 'text', notNull)
    .addPrimaryKeyConstraint('oauth_consents_pk', ['user_id', 'client_id'])
    .execute();

  await db.schema
    .createTable('oauth_device_polls')
    .addColumn('device_code_id', 'text', (c) => c.primaryKey())
    .addColumn('interval_seconds', 'integer', notNull)
    .addColumn('last_polled_at', 'text', notNull)
    .addColumn('expires_at', 'text', notNull)
    .execute();

  await withSerialId(db, db.schema.createTable('oauth_user_code_failures'))
    .addColumn('user_id', 'integer', notNull)
    .addColumn('address', 'text', notNull)
    .addColumn('created_at', 'text', notNull)
    .execute();
  await db.schema
    .createIndex('oauth_user_code_failures_user_idx')
    .on('oauth_user_code_failures')
    .columns(['user_id', 'created_at'])
    .execute();
  await db.schema
    .createIndex('oauth_user_code_failures_address_idx')
    .on('oauth_user_code_failures')
    .columns(['address', 'created_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['oauth_user_code_failures', 'oauth_device_polls', 'oauth_consents', 'oauth_models']) {
    await db.schema.dropTable(table).execute();
  }
}
