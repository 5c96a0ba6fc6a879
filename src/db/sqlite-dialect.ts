// Kysely's SQLite dialect, changed so that several processes (`svc serve`, `svc worker`, CLI
// commands) can write to one database file and wait for each other instead of failing.
//
// 1. Every transaction begins with BEGIN IMMEDIATE, taking the write lock at once. Kysely's driver
//    begins with a plain (deferred) BEGIN: the transaction starts as a reader and asks for the write
//    lock at its first write. If another process wrote in between, or holds the lock at that moment,
//    SQLite answers SQLITE_BUSY at once, without waiting: a reader that waited for a writer could
//    deadlock with it, and its snapshot is stale anyway (SQLITE_BUSY_SNAPSHOT). So twelve
//    `svc team create` run together failed with "database is locked" after 0 ms of waiting.
//    BEGIN IMMEDIATE asks for the lock before reading anything, where waiting is safe, and once a
//    transaction has it no statement of it can be refused. Single statements outside a transaction
//    take their snapshot and the lock together, and wait the same way.
// 2. A statement refused with SQLITE_BUSY waits (LockWaitingConnection below) for as long as other
//    connections keep committing, and fails only when one holder has kept the lock for
//    SERVICE_SQLITE_BUSY_TIMEOUT_MS. A fixed budget (SQLite's busy_timeout alone) failed under a
//    burst: 50 CLI processes starting at once on two cores each got so little CPU that every one
//    held the lock for 0.1-1.5 s, and the last in line waited more than 5 s behind the others,
//    though every holder was making progress. SQLite itself waits in short steps (LOCK_POLL_MS);
//    between steps the event loop runs.
// 3. Migrations run in one transaction (the adapter says SQLite has transactional DDL, which it
//    has). Kysely's SQLite adapter says it has not, and then runs each migration on its own with no
//    lock at all ("one connection per database" holds within a process only): two processes starting
//    on a fresh file both applied the same migration, and one failed. In one IMMEDIATE transaction
//    the migrator's read of what is applied and the migrations it then applies are one step.
import {
  CompiledQuery,
  SqliteAdapter,
  SqliteDialect,
  SqliteDriver,
  type DatabaseConnection,
  type DialectAdapter,
  type Driver,
  type QueryResult,
  type SqliteDialectConfig,
} from 'kysely';
import { isDatabaseBusy } from './busy.ts';

/** SQLite's own wait (busy_timeout) per attempt; the connection's busy_timeout after it opens. */
export const LOCK_POLL_MS = 50;
/** However busy the others, a statement waits at most this many times SERVICE_SQLITE_BUSY_TIMEOUT_MS. */
const MAX_WAIT_FACTOR = 6;

export interface LockWait {
  /** SERVICE_SQLITE_BUSY_TIMEOUT_MS: the longest wait while no other connection commits. */
  timeoutMs: number;
  /** PRAGMA data_version: changes whenever another connection has committed. */
  dataVersion(): number;
}

class LockWaitingConnection implements DatabaseConnection {
  readonly #inner: DatabaseConnection;
  readonly #wait: LockWait;
  constructor(inner: DatabaseConnection, wait: LockWait) {
    this.#inner = inner;
    this.#wait = wait;
  }

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    // Kysely's SQLite connection runs the statement synchronously (node:sqlite is synchronous), so a
    // refusal is thrown here, and the usual case costs no extra promise.
    try {
      return this.#inner.executeQuery<R>(query);
    } catch (error) {
      if (!isDatabaseBusy(error)) throw error;
      return this.#waitAndRetry<R>(query, error);
    }
  }

  async #waitAndRetry<R>(query: CompiledQuery, refusal: unknown): Promise<QueryResult<R>> {
    const { timeoutMs } = this.#wait;
    const start = Date.now() - Math.min(LOCK_POLL_MS, timeoutMs);
    const limit = start + MAX_WAIT_FACTOR * timeoutMs;
    let version = this.#wait.dataVersion();
    let progressAt = start;
    for (;;) {
      const now = Date.now();
      if (now - progressAt >= timeoutMs || now >= limit) throw refusal;
      // Lets the rest of the process run; the statement (a BEGIN IMMEDIATE or a single statement)
      // wrote nothing when it was refused, so running it again is safe.
      await new Promise((resolve) => setImmediate(resolve));
      try {
        return await this.#inner.executeQuery<R>(query);
      } catch (error) {
        if (!isDatabaseBusy(error)) throw error;
        refusal = error;
      }
      const seen = this.#wait.dataVersion();
      if (seen !== version) {
        version = seen;
        progressAt = Date.now();
      }
    }
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.#inner.streamQuery<R>(query, chunkSize);
  }
}

class ImmediateSqliteDriver extends SqliteDriver {
  readonly #wait: LockWait;
  #connection: LockWaitingConnection | null = null;
  constructor(config: SqliteDialectConfig, wait: LockWait) {
    super(config);
    this.#wait = wait;
  }
  override async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await super.acquireConnection();
    this.#connection ??= new LockWaitingConnection(connection, this.#wait);
    return this.#connection;
  }
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

class TransactionalDdlSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}

export class ImmediateSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;
  readonly #wait: LockWait;
  constructor(config: SqliteDialectConfig, wait: LockWait) {
    super(config);
    this.#config = config;
    this.#wait = wait;
  }
  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.#config, this.#wait);
  }
  override createAdapter(): DialectAdapter {
    return new TransactionalDdlSqliteAdapter();
  }
}
