// Applies pending migrations. On PostgreSQL Kysely's migrator holds an advisory lock while it
// runs, so several processes starting at once apply each migration exactly once.
import {
  DEFAULT_MIGRATION_TABLE as MIGRATION_TABLE,
  Kysely,
  Migrator,
  PostgresDialect,
  PostgresIntrospector,
  sql,
  type DatabaseIntrospector,
  type MigrationProvider,
  type TableMetadata,
} from 'kysely';
import type { Db } from './connection.ts';
import { MIGRATIONS } from './migrations/index.ts';
import type { Database } from './schema.ts';

type MigrationList = typeof MIGRATIONS;

/**
 * Applies the migrations of `list` (this code's, MIGRATIONS) that the database has not applied yet;
 * returns their names. A prefix of the list makes the database of an earlier release (tests).
 */
export async function migrateToLatest(db: Db, list: MigrationList = MIGRATIONS): Promise<string[]> {
  const provider: MigrationProvider = { getMigrations: async () => Object.fromEntries(list) };
  // PostgreSQL: the migrator's tables live in the current schema, named explicitly (below).
  const schema = db.dialect === 'postgres' ? await currentSchema(db) : undefined;
  if (await isUpToDate(db, schema, list)) return [];
  const migrator =
    db.dialect === 'postgres' && db.pool
      ? new Migrator({
          db: new Kysely<Database>({ dialect: new MigrationDialect({ pool: db.pool }) }),
          provider,
          // Without a schema the migrator looks for its bookkeeping tables in *every* schema of the
          // database, finds another schema's, skips creating its own and then fails ("relation
          // kysely_migration_lock does not exist"). Naming the schema lets deployments, and parallel
          // test runs, share one database a schema each.
          migrationTableSchema: schema,
        })
      : new Migrator({ db: db.kysely, provider });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/**
 * Whether the database has applied exactly this code's migrations: one read of the migrator's own
 * table, on every start but the first. The migrator finds the same by introspecting every table and
 * taking its lock, a noticeable share of a start. Anything else (no table yet, a migration pending,
 * one this code does not know) goes to the migrator, which applies or reports it; a migration
 * another process applies meanwhile is safe either way.
 */
async function isUpToDate(db: Db, schema: string | undefined, list: MigrationList): Promise<boolean> {
  let applied: string[];
  try {
    const table = sql.table(schema ? `${schema}.${MIGRATION_TABLE}` : MIGRATION_TABLE);
    const { rows } = await sql<{ name: string }>`select name from ${table}`.execute(db.kysely);
    applied = rows.map((row) => row.name);
  } catch {
    return false;
  }
  const known = list.map(([name]) => name);
  return applied.length === known.length && known.every((name) => applied.includes(name));
}

async function currentSchema(db: Db): Promise<string> {
  const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db.kysely);
  const schema = rows[0]?.schema;
  if (!schema) throw new Error('PostgreSQL has no current schema: create the schema named first in search_path.');
  return schema;
}

/**
 * The migrator asks the introspector whether its tables exist. Kysely's PostgreSQL introspector
 * reads every schema of the database (with has_schema_privilege per schema), which fails with
 * "schema … does not exist" when another process drops a schema during the query (parallel test
 * runs do, constantly). This one reads the current schema only, which is all the migrator needs.
 */
class CurrentSchemaIntrospector extends PostgresIntrospector implements DatabaseIntrospector {
  readonly #db: Kysely<any>;
  constructor(db: Kysely<any>) {
    super(db);
    this.#db = db;
  }
  override async getTables(): Promise<TableMetadata[]> {
    const { rows } = await sql<{ name: string; schema: string; type: string }>`
      select table_name as name, table_schema as schema, table_type as type
      from information_schema.tables where table_schema = current_schema()`.execute(this.#db);
    return rows.map((row) => ({ name: row.name, schema: row.schema, isView: row.type === 'VIEW', columns: [] }));
  }
}

/** PostgreSQL over the application's pool, with the introspector above (used for migrations only). */
class MigrationDialect extends PostgresDialect {
  override createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return new CurrentSchemaIntrospector(db);
  }
}
