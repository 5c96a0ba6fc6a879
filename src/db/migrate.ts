// Applies pending migrations. On PostgreSQL Kysely's migrator holds a transaction-level advisory
// lock while it runs, so several processes starting at once apply each migration exactly once.
import { Migrator, type MigrationProvider } from 'kysely';
import type { Db } from './connection.ts';
import { migrations } from './migrations/index.ts';

const provider: MigrationProvider = { getMigrations: async () => migrations };

export async function migrateToLatest(db: Db): Promise<string[]> {
  const migrator = new Migrator({ db: db.kysely, provider });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
