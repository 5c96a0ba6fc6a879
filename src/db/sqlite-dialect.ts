// Kysely's SQLite dialect, changed so that several processes (`svc serve`, `svc worker`, CLI
// commands) can write to one database file and wait for each other instead of failing.
//
// 1. Every transaction begins with BEGIN IMMEDIATE, taking the write lock before it reads anything.
//    A plain (deferred) BEGIN, Kysely's, asks for the lock only at the transaction's first write, and
//    there SQLite refuses at once, without waiting, whenever another connection holds the lock or has
//    committed since the transaction's first read: waiting could deadlock with that writer, and the
//    snapshot is stale anyway (SQLITE_BUSY_SNAPSHOT). Processes writing together would lose writes.
//    Once a transaction has the lock no statement of it can be refused. Single statements outside a
//    transaction take their snapshot and the lock together, and wait the same way.
// 2. A statement refused with SQLITE_BUSY waits (LockWaitingConnection) as long as other connections
//    keep committing, and fails only when SERVICE_SQLITE_BUSY_TIMEOUT_MS pass without a commit from
//    anyone (one holder keeping the lock), or six times that in all. A fixed budget would fail a
//    writer that is only far back in a queue: when many processes start at once on a small machine,
//    each holder gets little CPU and keeps the lock much longer than its transaction's CPU time.
//    SQLite waits in short steps (busy_timeout = LOCK_POLL_MS); between them the event loop runs.
// 3. Migrations run in one transaction (the adapter says SQLite has transactional DDL, which it has).
//    Kysely's SQLite adapter says it has not, and then runs each migration on its own with no lock
//    across processes: processes starting together on a fresh file would apply a migration twice and
//    fail. In one IMMEDIATE transaction, the migrator's read of what is applied and the migrations it
//    then applies are one step.
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
