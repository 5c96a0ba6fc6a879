// Applies pending migrations. On PostgreSQL Kysely's migrator holds an advisory lock while it
// runs, so several processes starting at once apply each migration exactly once.
import { Migrator, sql, type MigrationProvider } from 'kysely';
import type { Db } from './connection.ts';
import { migrations } from './migrations/index.ts';

const provider: MigrationProvider = { getMigrations: async () => migrations };

export async function migrateToLatest(db: Db): Promise<string[]> {
  // On PostgreSQL the migrator must be told its schema: without one it looks for its bookkeeping
  // tables in *every* schema of the database, finds another schema's, skips creating its own and
  // then fails ("relation kysely_migration_lock does not exist"). That happens to any deployment
  // sharing a database between schemas, and to parallel test runs (a schema each).
  const migrationTableSchema = db.dialect === 'postgres' ? await currentSchema(db) : undefined;
  const migrator = new Migrator({ db: db.kysely, provider, migrationTableSchema });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

async function currentSchema(db: Db): Promise<string> {
  const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db.kysely);
  const schema = rows[0]?.schema;
  if (!schema) throw new Error('PostgreSQL has no current schema: create the schema named first in search_path.');
  return schema;
}
