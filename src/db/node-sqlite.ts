// Adapts Node's built-in `node:sqlite` to the better-sqlite3-shaped interface that Kysely's
// SqliteDialect expects. No published adapter targets node:sqlite with Kysely 0.28, and the
// alternative drivers compile from source, which this project refuses; the shim is small.
import { DatabaseSync, type StatementSync, type SQLInputValue } from 'node:sqlite';
import type { SqliteDatabase, SqliteStatement } from 'kysely';
import { startCheckpointer } from './sqlite-checkpointer.ts';

// Prepared statements are cached by SQL text: Kysely compiles the same text for the same query
// shape, and preparing costs more than running on the hot paths (token lookup).
const STATEMENT_CACHE_SIZE = 500;

function toSqliteValue(value: unknown): SQLInputValue {
  if (value === undefined) return null;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (value instanceof Date) return value.toISOString();
  return value as SQLInputValue;
}

function bind(parameters: ReadonlyArray<unknown>): SQLInputValue[] {
  return parameters.map(toSqliteValue);
}

class CachedStatement implements SqliteStatement {
  readonly reader: boolean;
  #stmt: StatementSync;
  constructor(stmt: StatementSync) {
    this.#stmt = stmt;
    this.reader = stmt.columns().length > 0;
  }
  all(parameters: ReadonlyArray<unknown>): unknown[] {
    return this.#stmt.all(...bind(parameters));
  }
  run(parameters: ReadonlyArray<unknown>) {
    const result = this.#stmt.run(...bind(parameters));
    return { changes: result.changes, lastInsertRowid: result.lastInsertRowid };
  }
  iterate(parameters: ReadonlyArray<unknown>): IterableIterator<unknown> {
    return this.#stmt.iterate(...bind(parameters)) as IterableIterator<unknown>;
  }
}

/**
 * Opens the file with SQLite's busy_timeout at `busyTimeoutMs` for the PRAGMAs below (switching a
 * new file to WAL takes a lock another process may hold), then at `lockPollMs`: longer waits are
 * made in steps of that length by the dialect, which lets the event loop run between them and keeps
 * waiting while other processes commit (db/sqlite-dialect.ts).
 */
export function openNodeSqlite(
  location: string,
  busyTimeoutMs: number,
  lockPollMs: number,
): SqliteDatabase & { dataVersion(): number; credentialVersion(): number; released(): Promise<void> } {
  const database = new DatabaseSync(location, { enableForeignKeyConstraints: true, timeout: busyTimeoutMs });
  database.exec(
    `PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = ${Math.min(lockPollMs, busyTimeoutMs)};`,
  );
  const cache = new Map<string, CachedStatement>();
  const dataVersion = database.prepare('PRAGMA data_version');
  const readDataVersion = () => (dataVersion.get() as { data_version: number }).data_version;
  // WAL checkpoints (and their fsyncs) on a helper thread, off the event loop.
  const checkpointer = location === ':memory:' ? null : startCheckpointer(database, location);
  let threadStopped: Promise<void> = Promise.resolve();
  return {
    // Kysely calls close() without awaiting it; released() is what waits for the checkpoint thread.
    close: () => {
      if (checkpointer) threadStopped = checkpointer.stop();
      database.close();
    },
    /** After close(): resolves once no thread of this process has the database file open. */
    released: () => threadStopped,
    /** Changes whenever another connection has committed a change to the database file. */
    dataVersion: readDataVersion,
    /** Changes whenever another connection has committed a change to what the PAT cache holds (credentialCounter). */
    credentialVersion: credentialCounter(database, readDataVersion),
    prepare(sql: string): SqliteStatement {
      let statement = cache.get(sql);
      if (statement) return statement;
      statement = new CachedStatement(database.prepare(sql));
      // Bounded: the oldest entry is evicted first (ad-hoc SQL must not grow the cache forever).
      if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
      cache.set(sql, statement);
      return statement;
    },
  };
}

/**
 * A number that changes when another connection has committed a change to a credential the PAT
 * cache holds, or to the schema (migration 0017_credential_changes says why). PRAGMA data_version,
 * which moves on any other connection's commit to any table, says when to look: the count is read
 * only then, so a turn with no outside commit costs the PRAGMA alone. Before that migration has run
 * (no table yet) every outside commit counts, as data_version alone did.
 */
function credentialCounter(database: DatabaseSync, dataVersion: () => number): () => number {
  let seenDataVersion = -1;
  let version = -1;
  let schema = -1;
  let changes = 0;
  let read: StatementSync | null = null;
  return () => {
    const current = dataVersion();
    if (current === seenDataVersion) return changes;
    seenDataVersion = current;
    try {
      read ??= database.prepare(
        'select version, (select schema_version from pragma_schema_version) as schema from credential_changes',
      );
      const row = read.get() as { version: number; schema: number };
      if (row.version !== version || row.schema !== schema) {
        version = row.version;
        schema = row.schema;
        changes++;
      }
    } catch {
      read = null;
      changes++;
    }
    return changes;
  };
}
