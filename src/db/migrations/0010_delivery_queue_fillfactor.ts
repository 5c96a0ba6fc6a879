import { sql, type Kysely } from 'kysely';
import { isPostgres } from './helpers.ts';

// PostgreSQL: rows are written into webhook_deliveries pages until a page is 40% full, so that a
// claim (which sets locked_until and lease_token on rows written moments before, often every row of
// a page in one statement) finds room for their new versions on the same page. There an update of
// columns no index covers is heap-only (HOT): no new entry in any of the table's indexes, and the
// due index the next claim walks does not grow. On a full page (the default, 100) nearly every
// claimed row moves to another page, with a new entry in all four indexes. 40 rather than 50: the
// old versions are not dead until the claim commits, and the lease makes a row about 60 bytes
// longer, so a half-full page still lacks room for some rows of a whole-page claim. Only pages
// written after the change are affected: nothing is rewritten, and the lock taken blocks neither
// reads nor writes. SQLite has no fill factor (and rewrites a row in place anyway).
const DELIVERY_FILLFACTOR = 40;

export async function up(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  await sql.raw(`alter table webhook_deliveries set (fillfactor = ${DELIVERY_FILLFACTOR})`).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`alter table webhook_deliveries reset (fillfactor)`.execute(db);
}
