// The audit log's part of the scale scenario. The hook: when this build has an `audit_entries`
// table, `size` live entries and EXPIRED_ROWS expired ones are seeded here and the audit figures
// (log pages, purge, size per million) are measured; when it has none, every audit figure is
// reported as not available. The entries' columns are written here once the table exists.
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../src/db/schema.ts';
import type { SeedSql } from './sql.ts';

export const AUDIT_TABLE = 'audit_entries';

export async function hasAuditLog(db: Kysely<Database>, dialect: SeedSql['dialect']): Promise<boolean> {
  const query =
    dialect === 'postgres'
      ? sql`select 1 from information_schema.tables where table_schema = current_schema() and table_name = ${AUDIT_TABLE}`
      : sql`select 1 from sqlite_master where type = 'table' and name = ${AUDIT_TABLE}`;
  return (await query.execute(db)).rows.length > 0;
}

/** Seeds the audit log when the table exists; returns how many live entries (0: no audit log). */
export async function seedAudit(db: Kysely<Database>, s: SeedSql, _plan: { size: number; now: number }): Promise<number> {
  if (!(await hasAuditLog(db, s.dialect))) return 0;
  // The table exists but its seeding is not written yet: say so rather than measure an empty log.
  throw new Error(`${AUDIT_TABLE} exists in this build: write its seed in bench/scale/audit.ts`);
}
