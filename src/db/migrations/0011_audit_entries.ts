import type { Kysely } from 'kysely';
import { notNull, sql, withSerialId } from './helpers.ts';

// The team audit log (src/audit/): one row per change to a team, written in the change's own
// transaction and never updated. Two indexes, one per reader: (team_id, occurred_at, id) serves the
// audit-log API's newest-first keyset pages of one team (its filters are checked on those rows), and
// (occurred_at) the retention purge, which deletes the oldest rows of every team. Rows are only ever
// inserted and deleted, so neither index is rewritten by updates. The id is a serial integer: it
// orders the entries of one transaction (they share a millisecond) as they were written. The actor's
// user id has no foreign key: an entry outlives the account that made it, with the e-mail it had then.
export async function up(db: Kysely<unknown>): Promise<void> {
  await withSerialId(db, db.schema.createTable('audit_entries'))
    .addColumn('team_id', 'text', (c) => c.notNull().references('teams.id').onDelete('cascade'))
    .addColumn('occurred_at', 'text', notNull)
    .addColumn('action', 'text', notNull)
    .addColumn('actor_type', 'text', (c) => c.notNull().check(sql`actor_type in ('user', 'system')`))
    .addColumn('actor_id', 'integer')
    .addColumn('actor_email', 'text')
    .addColumn('credential_type', 'text', (c) =>
      c.check(sql`credential_type in ('session', 'pat', 'oauth', 'jwt', 'cli')`),
    )
    .addColumn('credential_id', 'text')
    .addColumn('target_type', 'text', notNull)
    .addColumn('target_id', 'text', notNull)
    .addColumn('ip', 'text')
    .addColumn('user_agent', 'text')
    .addColumn('request_id', 'text')
    .addColumn('data', 'text', notNull)
    .execute();
  await db.schema
    .createIndex('audit_entries_team_occurred_idx')
    .on('audit_entries')
    .columns(['team_id', 'occurred_at', 'id'])
    .execute();
  await db.schema.createIndex('audit_entries_occurred_idx').on('audit_entries').column('occurred_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('audit_entries').execute();
}
