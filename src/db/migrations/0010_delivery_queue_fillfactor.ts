import { sql, type Kysely } from 'kysely';
import { isPostgres } from './helpers.ts';

// PostgreSQL: rows are written into webhook_deliveries pages until a page is 40% full, so that a
// claim (which sets locked_until and lease_token on rows written moments before, often every row of
// a page in one statement) finds room for their new versions on the same page. There an update of
// columns no index covers is heap-only (HOT): no new entry in any of the table's indexes, and the
// due index the next claim walks does not grow. With full pages (the default, 100) over 95% of
// claims moved their row to another page with a new entry in all four indexes, and claims took
// three quarters of the worker's statement time (docs/performance.md, "The queue's fill factor").
// At 50, a claim of whole pages left 2 of 9 rows without room: their old versions are not dead
// until the claim commits, and the lease makes a row ~60 bytes longer. Only pages written from now
// on are affected: nothing is rewritten, and the lock taken blocks neither reads nor writes.
// SQLite has no fill factor (and rewrites a row in place anyway).
const DELIVERY_FILLFACTOR = 40;

export async function up(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  await sql.raw(`alter table webhook_deliveries set (fillfactor = ${DELIVERY_FILLFACTOR})`).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`alter table webhook_deliveries reset (fillfactor)`.execute(db);
}
