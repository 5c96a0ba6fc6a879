// Recognises a unique-constraint violation from either database, so callers can turn a lost race
// (two requests taking the same slug at once) into a 409 instead of a 500. The check for "is it
// free?" before the write gives the friendly answer; this catches the race the check cannot.
import { PostgresAdapter } from 'kysely';
import type { Executor } from '../db/schema.ts';

export function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: string; errcode?: number } | null;
  if (!e || typeof e !== 'object') return false;
  // PostgreSQL: SQLSTATE 23505. node:sqlite: SQLITE_CONSTRAINT_UNIQUE (2067) / _PRIMARYKEY (1555).
  return e.code === '23505' || e.errcode === 2067 || e.errcode === 1555;
}

/**
 * Serialises writes that must see a consistent set of a team's rows (the last-owner rule, replacing
 * a pending invitation) by locking the team's row until the transaction ends. PostgreSQL needs the
 * row lock; on SQLite the one connection already runs transactions one at a time (and SQLite has no
 * FOR UPDATE), so it is a no-op there.
 */
export async function lockTeam(trx: Executor, teamId: string): Promise<void> {
  if (!(trx.getExecutor().adapter instanceof PostgresAdapter)) return;
  await trx.selectFrom('teams').select('id').where('id', '=', teamId).forUpdate().execute();
}
