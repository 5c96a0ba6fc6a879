// The audit log's part of the scale seed: `size` live entries spread over the background teams,
// EXPIRED_ROWS entries past the retention (for the purge), and the caller's hooks team's own log of
// AUDIT_LOG_ROWS entries (1,000 pages and one), all as recordAudit writes them (src/audit/record.ts).
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../src/db/schema.ts';
import { EXPIRED_ROWS, teamOfRow } from './seed-rows.ts';
import type { SeedSql } from './sql.ts';

export const AUDIT_TABLE = 'audit_entries';
/** 1,000 pages of 50 and one more page: the cursor's 1,000th page exists. */
export const AUDIT_LOG_ROWS = 50_050;

/** Whether this build has an audit log (the scale scenario measures it only then). */
export async function hasAuditLog(db: Kysely<Database>, dialect: SeedSql['dialect']): Promise<boolean> {
  const query =
    dialect === 'postgres'
      ? sql`select 1 from information_schema.tables where table_schema = current_schema() and table_name = ${AUDIT_TABLE}`
      : sql`select 1 from sqlite_master where type = 'table' and name = ${AUDIT_TABLE}`;
  return (await query.execute(db)).rows.length > 0;
}

/** A member-added entry per row of the series, `team` and `ago` (seconds before `now`) being SQL of `i`. */
function entries(s: SeedSql, rows: number, now: number, team: string, ago: string, actorId: string): string {
  const t = (expr: string) => s.text(expr);
  return `insert into audit_entries (team_id, occurred_at, action, actor_type, actor_id, actor_email, credential_type, credential_id,
      target_type, target_id, ip, user_agent, request_id, data)
    select ${team}, ${s.iso(`${now} - (${ago})`)}, 'team.member.added', 'user', ${actorId}, 'bg-user-' || ${t(actorId)} || '@example.com', 'pat', ${t(actorId)},
      'user', ${t('i')}, '203.0.113.' || ${t('i % 250')}, 'svc-cli/0.1.0', 'req-' || ${s.randomHex(16)},
      '{"email":"member-' || ${t('i')} || '@example.com","role":"member"}'
    from ${s.series(rows)} as x`;
}

/**
 * Live and expired entries of the background teams (after seed-rows.ts's teams). Returns how many
 * live entries (0 when this build has no audit log).
 */
export async function seedAudit(
  db: Kysely<Database>,
  s: SeedSql,
  plan: { size: number; now: number; retentionDays: number },
): Promise<number> {
  if (!(await hasAuditLog(db, s.dialect))) return 0;
  const { size, now } = plan;
  const team = teamOfRow(s, `((i - 1) % ${size} + 1)`);
  await sql.raw(entries(s, size, now, team, `i * ${(7 * 86_400) / size}`, '1')).execute(db);
  await sql.raw(entries(s, EXPIRED_ROWS, now, team, `${(plan.retentionDays + 10) * 86_400} + i`, '1')).execute(db);
  return size;
}

/** The hooks team's own log: one entry a second over the last AUDIT_LOG_ROWS seconds. */
export async function seedAuditFixture(
  db: Kysely<Database>,
  s: SeedSql,
  teamId: string,
  callerId: number,
  now: number,
): Promise<void> {
  if (!(await hasAuditLog(db, s.dialect))) return;
  await sql.raw(entries(s, AUDIT_LOG_ROWS, now, `'${teamId}'`, 'i', String(callerId))).execute(db);
}
