import type { Kysely } from 'kysely';
import { flag, notNull, withSerialId } from './helpers.ts';

// Accounts: browser sessions, e-mail confirmation and password-reset keys, TOTP, recovery codes,
// authentication failure records (throttling), and the JWT signing keys and refresh tokens.
export async function up(db: Kysely<unknown>): Promise<void> {
  // id is the SHA-256 of the cookie value: a leaked table does not hand out live sessions.
  await db.schema
    .createTable('sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('stage', 'text', notNull) // 'mfa' (password given, TOTP pending) or 'full'
    .addColumn('created_at', 'text', notNull)
    .addColumn('last_seen_at', 'text', notNull)
    .addColumn('expires_at', 'text', notNull)
    .addColumn('reauth_at', 'text')
    .addColumn('ip', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('user_agent', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  await db.schema.createIndex('sessions_user_idx').on('sessions').column('user_id').execute();
  await db.schema.createIndex('sessions_expires_idx').on('sessions').column('expires_at').execute();

  // Single-use links sent by e-mail; only the SHA-256 of the key is stored.
  await db.schema
    .createTable('account_keys')
    .addColumn('key_hash', 'text', (c) => c.primaryKey())
    .addColumn('purpose', 'text', notNull) // 'confirm_email' | 'password_reset'
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('email', 'text', notNull)
    .addColumn('created_at', 'text', notNull)
    .addColumn('expires_at', 'text', notNull)
    .addColumn('used_at', 'text')
    .execute();
  await db.schema.createIndex('account_keys_user_idx').on('account_keys').columns(['user_id', 'purpose']).execute();

  await db.schema
    .createTable('user_totp')
    .addColumn('user_id', 'integer', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('secret_encrypted', 'text', notNull)
    .addColumn('confirmed_at', 'text')
    .addColumn('last_used_step', 'integer', flag(0))
    .addColumn('created_at', 'text', notNull)
    .execute();

  await withSerialId(db, db.schema.createTable('recovery_codes'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('code_hash', 'text', notNull)
    .addColumn('used_at', 'text')
    .addColumn('created_at', 'text', notNull)
    .execute();
  await db.schema.createIndex('recovery_codes_user_idx').on('recovery_codes').column('user_id').execute();

  await withSerialId(db, db.schema.createTable('auth_failures'))
    .addColumn('bucket', 'text', notNull)
    .addColumn('created_at', 'text', notNull)
    .execute();
  await db.schema
    .createIndex('auth_failures_bucket_idx')
    .on('auth_failures')
    .columns(['bucket', 'created_at'])
    .execute();

  await db.schema
    .createTable('jwt_keys')
    .addColumn('kid', 'text', (c) => c.primaryKey())
    .addColumn('alg', 'text', notNull)
    .addColumn('private_jwk_encrypted', 'text', notNull)
    .addColumn('public_jwk', 'text', notNull)
    .addColumn('created_at', 'text', notNull)
    .addColumn('retire_at', 'text') // null: current or still published; set at rotation
    .execute();

  await db.schema
    .createTable('jwt_refresh_tokens')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('family_id', 'text', notNull)
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('scope', 'text', notNull)
    .addColumn('created_at', 'text', notNull)
    .addColumn('expires_at', 'text', notNull)
    .addColumn('used_at', 'text')
    .addColumn('revoked_at', 'text')
    .execute();
  await db.schema.createIndex('jwt_refresh_family_idx').on('jwt_refresh_tokens').column('family_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    'jwt_refresh_tokens',
    'jwt_keys',
    'auth_failures',
    'recovery_codes',
    'user_totp',
    'account_keys',
    'sessions',
  ]) {
    await db.schema.dropTable(table).execute();
  }
}
