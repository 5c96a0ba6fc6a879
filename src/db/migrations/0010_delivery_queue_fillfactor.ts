import { sql, type Kysely } from 'kysely';
import { isPostgres } from './helpers.ts';

// PostgreSQL: webhook_deliveries pages are filled to half when rows are written, so that a claim
// (which sets locked_until and lease_token on rows written moments before, a whole page of them
// per claim) finds room for the new row versions on the same page. There an update of columns no
// index covers is heap-only (HOT): no new entry in any of the table's indexes, and the queue index
// the next claim walks does not grow. Full pages (the default, 100) moved every claimed row to
// another page with a new entry in all four indexes: over 95% of claims were not HOT, and claims
// took three quarters of the worker's statement time (docs/performance.md, "The queue's fill factor").
// At 60 or 70 most rows still did not fit; at 40 nothing more was gained. Only pages written from
// now on are affected; no rewrite, and the lock taken does not block reads or writes.
// SQLite has no fill factor (and rewrites a row in place anyway).
export const DELIVERY_FILLFACTOR = 40;

export async function up(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  await sql.raw(`alter table webhook_deliveries set (fillfactor = ${DELIVERY_FILLFACTOR})`).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`alter table webhook_deliveries reset (fillfactor)`.execute(db);
}
