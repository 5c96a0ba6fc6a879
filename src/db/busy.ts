// Recognises SQLite's "database is locked". Its own module, free of Kysely, because the CLI's entry
// (main.ts) and the HTTP error handler both need it before anything else is loaded.

const SQLITE_BUSY = 5;

/**
 * Whether an error is SQLITE_BUSY (or one of its extended codes): the wait for a lock another
 * connection holds ran out (SERVICE_SQLITE_BUSY_TIMEOUT_MS, db/sqlite-dialect.ts). The statement that
 * failed wrote nothing, and a transaction refused at its BEGIN IMMEDIATE wrote nothing at all, so
 * trying again is safe. Only SQLite reports it: PostgreSQL waits for row locks without a limit here.
 */
export function isDatabaseBusy(error: unknown): boolean {
  const { code, errcode } = (error ?? {}) as { code?: unknown; errcode?: unknown };
  return code === 'ERR_SQLITE_ERROR' && typeof errcode === 'number' && (errcode & 0xff) === SQLITE_BUSY;
}
