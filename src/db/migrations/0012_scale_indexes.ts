import { sql, type Kysely } from 'kysely';

// Indexes that keep reads and purges proportional to what they return or delete, not to the table:
// - memberships (team_id, joined_at, user_id, role): a team's member list in its order, a page read
//   from the index alone (without it every page read and sorted all of the team's members, and
//   joined each of them to its user).
// - events (created_at): the log purge deletes old events in batches along it (without it, one
//   statement per team, every team, every run). Events are never updated: entries only append.
// - webhook_deliveries (created_at) of finished rows: the log purge's batches. Partial: a row enters
//   it when its result is written (appended at the end, its created_at being the attempt time) and
//   never moves, so pending rows (the queue, updated by every claim) cost it nothing.
// - jwt_refresh_tokens (expires_at), auth_failures (created_at): the accounts purge's batches.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('memberships_team_joined_idx')
    .on('memberships')
    .columns(['team_id', 'joined_at', 'user_id', 'role'])
    .execute();
  await db.schema.createIndex('events_created_idx').on('events').column('created_at').execute();
  await db.schema
    .createIndex('webhook_deliveries_finished_idx')
    .on('webhook_deliveries')
    .column('created_at')
    .where(sql.ref('status'), '<>', sql.lit('pending'))
    .execute();
  await db.schema.createIndex('jwt_refresh_tokens_expires_idx').on('jwt_refresh_tokens').column('expires_at').execute();
  await db.schema.createIndex('auth_failures_created_idx').on('auth_failures').column('created_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const name of [
    'auth_failures_created_idx',
    'jwt_refresh_tokens_expires_idx',
    'webhook_deliveries_finished_idx',
    'events_created_idx',
    'memberships_team_joined_idx',
  ]) {
    await db.schema.dropIndex(name).execute();
  }
}
