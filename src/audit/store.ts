// Reading the audit log (one team's entries, filtered, as the API shows them) and the retention
// purge. Nothing here changes an entry: the log is append-only.
import { sql } from 'kysely';
import type { Executor, Row } from '../db/schema.ts';
import { isoAfter } from '../util/time.ts';
import type { AuditAction } from './actions.ts';

export interface AuditFilters {
  action?: AuditAction;
  actorId?: number;
  /** ISO 8601 UTC (fixed width): entries at or after it. */
  since?: string;
  /** Entries strictly before it. */
  until?: string;
}

/** One team's entries, filtered, not yet ordered or limited (cursorPage does both). */
export function auditEntriesQuery(db: Executor, teamId: string, filters: AuditFilters) {
  let query = db.selectFrom('audit_entries').selectAll().where('team_id', '=', teamId);
  if (filters.action !== undefined) query = query.where('action', '=', filters.action);
  if (filters.actorId !== undefined) query = query.where('actor_id', '=', filters.actorId);
  if (filters.since !== undefined) query = query.where('occurred_at', '>=', filters.since);
  if (filters.until !== undefined) query = query.where('occurred_at', '<', filters.until);
  return query;
}

export interface AuditEntryView {
  id: number;
  occurred_at: string;
  action: string;
  actor: { type: 'user' | 'system'; id: number | null; email: string | null };
  credential: { type: string; id: string | null } | null;
  target: { type: string; id: string };
  context: { ip: string | null; user_agent: string | null; request_id: string | null };
  data: Record<string, unknown>;
}

export function auditEntryView(row: Row<'audit_entries'>): AuditEntryView {
  return {
    id: Number(row.id),
    occurred_at: row.occurred_at,
    action: row.action,
    actor: { type: row.actor_type, id: row.actor_id === null ? null : Number(row.actor_id), email: row.actor_email },
    credential: row.credential_type === null ? null : { type: row.credential_type, id: row.credential_id },
    target: { type: row.target_type, id: row.target_id },
    context: { ip: row.ip, user_agent: row.user_agent, request_id: row.request_id },
    data: JSON.parse(row.data) as Record<string, unknown>,
  };
}

const PURGE_CHUNK = 1000;

/**
 * Deletes the entries older than `retentionDays`, oldest first along the occurred_at index, in
 * chunks: on SQLite each statement holds the only writer, so none runs long. Idempotent, so any
 * number of workers may run it at once. Returns how many it deleted.
 */
export async function purgeAuditEntries(db: Executor, retentionDays: number, now = Date.now()): Promise<number> {
  const cutoff = isoAfter(-retentionDays * 86400, now);
  let deleted = 0;
  for (;;) {
    const result = await sql`delete from audit_entries where id in (
        select id from audit_entries where occurred_at < ${cutoff} order by occurred_at limit ${PURGE_CHUNK})`.execute(
      db,
    );
    const n = Number(result.numAffectedRows ?? 0);
    deleted += n;
    if (n < PURGE_CHUNK) return deleted;
  }
}
