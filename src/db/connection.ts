// Opens the database named by DATABASE_URL: an embedded SQLite file (default) or PostgreSQL.
import fs from 'node:fs';
import path from 'node:path';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { openNodeSqlite } from './node-sqlite.ts';
import type { Database } from './schema.ts';
import { WriteWatchPlugin } from './write-watch.ts';

export type DialectName = 'sqlite' | 'postgres';

export interface Db {
  kysely: Kysely<Database>;
  dialect: DialectName;
  /** The pg pool in PostgreSQL mode (LISTEN/NOTIFY and advisory locks need raw clients). */
  pool: pg.Pool | null;
  close(): Promise<void>;
}

// COUNT(*) and BIGINT columns arrive as strings from pg by default; every such value here fits a JS number.
pg.types.setTypeParser(20, (value) => Number(value));

// Per Kysely instance: a counter that changes whenever another connection (another process, or a
// CLI command in this one) commits to the same database. SQLite's `PRAGMA data_version` is exactly
// that and costs a microsecond; PostgreSQL has no such cheap local read, so it has none.
const externalChangeCounters = new WeakMap<Kysely<Database>, () => number>();

export function externalChangeCounter(kysely: Kysely<Database>): (() => number) | null {
  return externalChangeCounters.get(kysely) ?? null;
}

export function isSqliteUrl(url: string): boolean {
  return url.startsWith('sqlite:');
}

export function openDb(databaseUrl: string, options: { poolSize?: number } = {}): Db {
  if (isSqliteUrl(databaseUrl)) {
    const location = databaseUrl.slice('sqlite:'.length);
    if (location !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(location)), { recursive: true });
    const database = openNodeSqlite(location);
    const kysely = new Kysely<Database>({ dialect: new SqliteDialect({ database }), plugins: [new WriteWatchPlugin()] });
    externalChangeCounters.set(kysely, database.dataVersion);
    return { kysely, dialect: 'sqlite', pool: null, close: () => kysely.destroy() };
  }
  const pool = new pg.Pool({ connectionString: databaseUrl, max: options.poolSize ?? 10 });
  // An idle client that loses its server must not crash the process; the next query reports it.
  pool.on('error', () => {});
  const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool }), plugins: [new WriteWatchPlugin()] });
  return { kysely, dialect: 'postgres', pool, close: () => kysely.destroy() };
}
