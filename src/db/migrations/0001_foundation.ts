import type { Kysely } from 'kysely';
import { flag, notNull, sql, withSerialId } from './helpers.ts';

export async function up(db: Kysely<unknown>): Promise<void> {
  await withSerialId(db, db.schema.createTable('users'))
    .addColumn('email', 'text', notNull)
    .addColumn('password_hash', 'text', notNull)
    .addColumn('first_name', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('last_name', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('display_name', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('email_verified_at', 'text')
    .addColumn('is_active', 'integer', flag(1))
    .addColumn('is_staff', 'integer', flag(0))
    .addColumn('created_at', 'text', notNull)
    .addColumn('updated_at', 'text', notNull)
    .execute();
  // E-mail addresses are stored lower-cased (accounts/email.ts), so a plain unique index is case-insensitive.
  await db.schema.createIndex('users_email_unique').on('users').column('email').unique().execute();

  await db.schema
    .createTable('teams')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', notNull)
    .addColumn('slug', 'text', notNull)
    .addColumn('is_active', 'integer', flag(1))
    .addColumn('created_at', 'text', notNull)
    .addColumn('updated_at', 'text', notNull)
    .execute();
  await db.schema.createIndex('teams_slug_unique').on('teams').column('slug').unique().execute();

  await withSerialId(db, db.schema.createTable('memberships'))
    .addColumn('team_id', 'text', (c) => c.notNull().references('teams.id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('role', 'text', (c) => c.notNull().check(sql`role in ('owner', 'admin', 'member')`))
    .addColumn('joined_at', 'text', notNull)
    .addUniqueConstraint('memberships_team_user_unique', ['team_id', 'user_id'])
    .execute();
  await db.schema.createIndex('memberships_user_idx').on('memberships').column('user_id').execute();

  await withSerialId(db, db.schema.createTable('personal_access_tokens'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', notNull)
    .addColumn('token_hash', 'text', notNull)
    .addColumn('token_prefix', 'text', notNull)
    .addColumn('scopes', 'text', notNull)
    .addColumn('expires_at', 'text')
    .addColumn('last_used_at', 'text')
    .addColumn('revoked_at', 'text')
    .addColumn('created_at', 'text', notNull)
    .execute();
  await db.schema.createIndex('pat_hash_unique').on('personal_access_tokens').column('token_hash').unique().execute();
  await db.schema.createIndex('pat_user_idx').on('personal_access_tokens').column('user_id').execute();

  await withSerialId(db, db.schema.createTable('products'))
    .addColumn('name', 'text', notNull)
    .addColumn('sku', 'text', (c) => c.notNull().unique())
    .addColumn('price', 'text', notNull)
    .addColumn('created_at', 'text', notNull)
    .execute();
  const seededAt = '2026-01-01T00:00:00.000Z';
  const products = [
    ['Starter plan', 'PLAN-STARTER', '9.00'],
    ['Team plan', 'PLAN-TEAM', '49.00'],
    ['Business plan', 'PLAN-BUSINESS', '199.00'],
    ['Extra seat', 'ADDON-SEAT', '8.00'],
    ['Priority support', 'ADDON-SUPPORT', '99.00'],
  ];
  for (const [name, sku, price] of products) {
    await sql`insert into products (name, sku, price, created_at) values (${name}, ${sku}, ${price}, ${seededAt})`.execute(
      db,
    );
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['products', 'personal_access_tokens', 'memberships', 'teams', 'users']) {
    await db.schema.dropTable(table).execute();
  }
}
