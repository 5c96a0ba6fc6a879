import type { Kysely } from 'kysely';
import { notNull } from './helpers.ts';

// Every dispatched event, kept so that deliveries, retries and replays refer to one immutable record.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('type', 'text', notNull)
    .addColumn('api_version', 'text', notNull)
    .addColumn('team_id', 'text', (c) => c.notNull().references('teams.id').onDelete('cascade'))
    .addColumn('data', 'text', notNull)
    .addColumn('created_at', 'text', notNull)
    .execute();
  await db.schema.createIndex('events_team_created_idx').on('events').columns(['team_id', 'created_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('events').execute();
}
