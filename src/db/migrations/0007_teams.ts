import type { Kysely } from 'kysely';
import { notNull, sql } from './helpers.ts';

// Team invitations. Only the SHA-256 of the accept token is stored. At most one *pending*
// invitation per (team, address) is enforced by a partial unique index, so two concurrent
// invitations to the same address can never both stay live, whatever the application code does.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('invitations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('team_id', 'text', (c) => c.notNull().references('teams.id').onDelete('cascade'))
    .addColumn('email', 'text', notNull)
    .addColumn('role', 'text', (c) => c.notNull().check(sql`role in ('admin', 'member')`))
    .addColumn('message', 'text')
    .addColumn('token_hash', 'text', notNull)
    .addColumn('status', 'text', (c) =>
      c.notNull().check(sql`status in ('pending', 'accepted', 'revoked', 'replaced')`),
    )
    .addColumn('invited_by', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('accepted_by', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('created_at', 'text', notNull)
    .addColumn('expires_at', 'text', notNull)
    .addColumn('closed_at', 'text')
    .execute();
  await db.schema
    .createIndex('invitations_token_hash_unique')
    .on('invitations')
    .column('token_hash')
    .unique()
    .execute();
  await db.schema
    .createIndex('invitations_pending_email_unique')
    .on('invitations')
    .columns(['team_id', 'email'])
    .unique()
    .where(sql.ref('status'), '=', sql.lit('pending'))
    .execute();
  await db.schema
    .createIndex('invitations_team_created_idx')
    .on('invitations')
    .columns(['team_id', 'created_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('invitations').execute();
}
