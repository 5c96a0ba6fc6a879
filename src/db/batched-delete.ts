// Purges delete in batches picked along an index, oldest first:
//
//   delete from t where id in (select id from t where expires_at < ? order by expires_at limit 1000)
//
// Each statement reads about as many index entries as it deletes, whatever the table's size, and
// is short: on SQLite a statement holds the only writer, on PostgreSQL its row locks and its WAL
// are bounded, so requests and other writers get in between batches. The ORDER BY is the index's
// own order: it costs no sort, and it keeps PostgreSQL's planner on the index (with LIMIT and no
// order it may prefer a sequential scan that stops after 1,000 matches, which reads the whole
// table when the old rows are not the first ones it meets).
import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';

export const PURGE_BATCH = 1000;

type Executor = Kysely<any> | Transaction<any>;

/** Runs `statement` until it deletes fewer than PURGE_BATCH rows; returns how many it deleted. */
export async function deleteInBatches(db: Executor, statement: () => RawBuilder<unknown>): Promise<number> {
  let total = 0;
  for (;;) {
    const result = await statement().execute(db);
    const deleted = Number(result.numAffectedRows ?? 0);
    total += deleted;
    if (deleted < PURGE_BATCH) return total;
  }
}

/**
 * Deletes the rows of `table` whose `column` is below `before` (and that meet `also`, a condition
 * the index's own predicate states), in batches along the index on `column`. `key` is the
 * table's primary key (one column, or several as a row value).
 */
export function purgeOlderThan(
  db: Executor,
  table: string,
  column: string,
  before: string,
  options: { key?: string[]; also?: RawBuilder<unknown> } = {},
): Promise<number> {
  const key = options.key ?? ['id'];
  const keyList = sql.join(key.map((name) => sql.ref(name)));
  const keyValue = key.length === 1 ? keyList : sql`(${keyList})`;
  const also = options.also ? sql`and ${options.also}` : sql``;
  return deleteInBatches(
    db,
    () => sql`delete from ${sql.table(table)} where ${keyValue} in (
      select ${keyList} from ${sql.table(table)} where ${sql.ref(column)} < ${before} ${also}
      order by ${sql.ref(column)} limit ${PURGE_BATCH})`,
  );
}
