// Opens the database named by DATABASE_URL: an embedded SQLite file (default) or PostgreSQL.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Kysely, PostgresDialect } from 'kysely';
import type pg from 'pg';
import { openNodeSqlite } from './node-sqlite.ts';
import type { Database } from './schema.ts';
import { ImmediateSqliteDialect, LOCK_POLL_MS } from './sqlite-dialect.ts';
import { WriteFeed, WritePublisher, isPublishedWrite } from './write-feed.ts';
import { WriteWatchPlugin } from './write-watch.ts';

export type DialectName = 'sqlite' | 'postgres';

export interface Db {
  kysely: Kysely<Database>;
  dialect: DialectName;
  /** The pg pool in PostgreSQL mode (LISTEN/NOTIFY and advisory locks need raw clients). */
  pool: pg.Pool | null;
  close(): Promise<void>;
}

let pgModule: typeof pg | null = null;

/**
 * The pg driver, loaded on first use: a SQLite deployment never loads it (startup time and memory,
 * docs/architecture.md "Lazy loading"). Synchronous (pg is CommonJS) so that openDb stays so.
 */
function loadPg(): typeof pg {
  if (pgModule) return pgModule;
  pgModule = createRequire(import.meta.url)('pg') as typeof pg;
  // COUNT(*) and BIGINT columns arrive as strings from pg by default; every such value here fits a JS number.
  pgModule.types.setTypeParser(20, (value) => Number(value));
  return pgModule;
}

/**
 * How a cache learns of commits made by other connections (other processes, or a CLI command in
 * this one), per Kysely instance. SQLite: `counter()` changes whenever another connection committed
 * a change to the credentials the PAT cache holds (poll it; node-sqlite.ts, credentialCounter).
 * PostgreSQL: `subscribe()` delivers the writes other processes publish (db/write-feed.ts); `live()`
 * is false while not listening.
 */
export type ExternalChanges =
  | { kind: 'counter'; counter: () => number }
  | { kind: 'feed'; subscribe(listener: (table: string) => void): void; live(): boolean };

const externalChangeSources = new WeakMap<Kysely<Database>, ExternalChanges>();

export function externalChanges(kysely: Kysely<Database>): ExternalChanges | null {
  return externalChangeSources.get(kysely) ?? null;
}

export function isSqliteUrl(url: string): boolean {
  return url.startsWith('sqlite:');
}

/** SERVICE_SQLITE_BUSY_TIMEOUT_MS's default: how long a SQLite statement waits for another process's lock. */
export const DEFAULT_SQLITE_BUSY_TIMEOUT_MS = 5000;

export function openDb(databaseUrl: string, options: { poolSize?: number; sqliteBusyTimeoutMs?: number } = {}): Db {
  if (isSqliteUrl(databaseUrl)) {
    const location = databaseUrl.slice('sqlite:'.length);
    if (location !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(location)), { recursive: true });
    const timeoutMs = options.sqliteBusyTimeoutMs ?? DEFAULT_SQLITE_BUSY_TIMEOUT_MS;
    const database = openNodeSqlite(location, timeoutMs, LOCK_POLL_MS);
    // Transactions begin IMMEDIATE and writers wait for each other, so that several processes can
    // write to the file (sqlite-dialect.ts).
    const dialect = new ImmediateSqliteDialect({ database }, { timeoutMs, dataVersion: database.dataVersion });
    const kysely = new Kysely<Database>({ dialect, plugins: [new WriteWatchPlugin()] });
    externalChangeSources.set(kysely, { kind: 'counter', counter: database.credentialVersion });
    const close = async () => {
      await kysely.destroy();
      await database.released();
    };
    return { kysely, dialect: 'sqlite', pool: null, close };
  }
  const pg = loadPg();
  const pool = new pg.Pool({ connectionString: databaseUrl, max: options.poolSize ?? 10 });
  // An idle client that loses its server must not crash the process; the next query reports it.
  pool.on('error', () => {});
  // Writes to the tables other processes cache are published (NOTIFY) before the write's promise
  // resolves, so a writer that then sends a request finds every server already told.
  const publisher = new WritePublisher(pg.Client, databaseUrl);
  const publish = (table: string, columns: readonly string[] | null) =>
    isPublishedWrite(table, columns) ? publisher.publish(table) : undefined;
  const kysely = new Kysely<Database>({
    dialect: new PostgresDialect({ pool }),
    plugins: [new WriteWatchPlugin(publish)],
  });
  const feed = new WriteFeed(pool);
  externalChangeSources.set(kysely, {
    kind: 'feed',
    subscribe: (listener) => feed.subscribe(listener),
    live: () => feed.live,
  });
  return {
    kysely,
    dialect: 'postgres',
    pool,
    close: async () => {
      await feed.close();
      await kysely.destroy();
      await publisher.close();
    },
  };
}
