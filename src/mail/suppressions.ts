// The suppression list. A row is one episode: created when a Permanent bounce or a complaint arrives, and
// released only by an operator (CLI or admin API), who is recorded with the time and reason. Released rows stay
// as history; an event that happened before the latest release of its address does not suppress it again
// (SNS may deliver late or redeliver), while a newer genuine bounce or complaint does.
import { sql } from 'kysely';
import type { Executor, Row } from '../db/schema.ts';
import { nowIso } from '../util/time.ts';

export type SuppressionRow = Row<'mail_suppressions'>;

export type SuppressOutcome = 'suppressed' | 'already_suppressed' | 'predates_release';

/** Whether an event about `email` that happened at `occurredAt` should suppress it now (reads only). */
export async function suppressionDecision(trx: Executor, email: string, occurredAt: string): Promise<SuppressOutcome> {
  // One statement: the active episode, if any, and the latest release.
  const { rows } = await sql<{ active: number | null; last_release: string | null }>`
    select (select 1 from mail_suppressions where email = ${email} and released_at is null limit 1) as active,
      (select max(released_at) from mail_suppressions where email = ${email}) as last_release`.execute(trx);
  const [decision] = rows;
  if (decision?.active) return 'already_suppressed';
  if (decision?.last_release && occurredAt <= decision.last_release) return 'predates_release';
  return 'suppressed';
}

export async function insertSuppression(
  trx: Executor,
  entry: { email: string; reason: 'bounce' | 'complaint'; eventKey: string | null; occurredAt: string },
): Promise<void> {
  await trx
    .insertInto('mail_suppressions')
    .values({
      email: entry.email,
      reason: entry.reason,
      event_key: entry.eventKey,
      occurred_at: entry.occurredAt,
      created_at: nowIso(),
    })
    // A concurrent writer suppressing the same address wins; one active row per address either way.
    .onConflict((oc) => oc.column('email').where('released_at', 'is', null).doNothing())
    .execute();
}

/** Releases the active suppression of `email`; false when there is none. */
export async function releaseSuppression(db: Executor, email: string, by: string, reason: string): Promise<boolean> {
  const result = await db
    .updateTable('mail_suppressions')
    .set({ released_at: nowIso(), released_by: by.slice(0, 200), release_reason: reason.slice(0, 1000) })
    .where('email', '=', email)
    .where('released_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export interface SuppressionView {
  email: string;
  reason: string;
  event_key: string | null;
  occurred_at: string;
  created_at: string;
}

export function suppressionView(row: SuppressionRow): SuppressionView {
  return {
    email: row.email,
    reason: row.reason,
    event_key: row.event_key,
    occurred_at: row.occurred_at,
    created_at: row.created_at,
  };
}

/** Active suppressions, newest first (created_at, then id, both descending). */
export async function listActiveSuppressions(
  db: Executor,
  options: { email?: string; limit?: number } = {},
): Promise<SuppressionRow[]> {
  let query = db.selectFrom('mail_suppressions').selectAll().where('released_at', 'is', null);
  if (options.email) query = query.where('email', '=', options.email);
  return query
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(options.limit ?? 10_000)
    .execute();
}
