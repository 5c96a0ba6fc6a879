// Records every SQL statement a piece of the service runs, and asks the database how it runs each:
// SQLite's EXPLAIN QUERY PLAN, PostgreSQL's EXPLAIN. Statements are caught where every one passes
// (Kysely's query executor, whichever builder, raw template or precompiled text made it, and the pg
// pool's own query calls), so nothing a path runs escapes the list. Used by the query-plan tests
// (test/db/query-plans.test.ts) and by the scale benchmark (bench/scale/plans.ts).
import { CompiledQuery, type Kysely } from 'kysely';
import type pg from 'pg';
import type { Db } from '../../src/db/connection.ts';
import type { Database } from '../../src/db/schema.ts';

export interface Statement {
  sql: string;
  parameters: readonly unknown[];
}

export interface Plan {
  sql: string;
  plan: string[];
  /** What in the plan reads or sorts rows in proportion to a table rather than to the answer. */
  flags: string[];
}

type ExecuteQuery = (this: unknown, query: CompiledQuery, ...rest: unknown[]) => Promise<unknown>;

/** Starts recording; `take()` returns and clears what was recorded since. */
export function captureStatements(db: Db) {
  let recording: Statement[] = [];
  let on = true;
  // The executor's executeQuery lives on a base class Kysely does not export: found by walking up.
  let proto = Object.getPrototypeOf(db.kysely.getExecutor());
  while (proto && !Object.hasOwn(proto, 'executeQuery')) proto = Object.getPrototypeOf(proto);
  const original = proto.executeQuery as ExecuteQuery;
  proto.executeQuery = function (this: unknown, query: CompiledQuery, ...rest: unknown[]) {
    if (on) recording.push({ sql: query.sql, parameters: query.parameters });
    return original.call(this, query, ...rest);
  };
  const pool = db.pool;
  const poolQuery = pool?.query;
  if (pool && poolQuery) {
    pool.query = function (this: pg.Pool, ...args: unknown[]) {
      const [first, values] = args as [string | { text: string; values?: unknown[] }, unknown[] | undefined];
      if (on)
        recording.push(
          typeof first === 'string'
            ? { sql: first, parameters: values ?? [] }
            : { sql: first.text, parameters: first.values ?? [] },
        );
      return (poolQuery as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof pool.query;
  }
  return {
    take(): Statement[] {
      const taken = recording;
      recording = [];
      return taken;
    },
    /** Runs `work` without recording (the EXPLAINs themselves, set-up requests). */
    async quiet<T>(work: () => Promise<T>): Promise<T> {
      on = false;
      try {
        return await work();
      } finally {
        on = true;
      }
    },
  };
}

const SKIP =
  /^\s*(begin|commit|rollback|savepoint|release|pragma|set |select set_config\('synchronous_commit'|listen|unlisten|select pg_notify|select 1\s*$)/i;

/**
 * One entry per distinct statement text, EXPLAINed with the parameters of its first run.
 * `preferIndexes` (PostgreSQL): sequential and bitmap scans and sorts are priced out, so that on a
 * test's few rows the plan shows whether an index can serve the statement in its order at all (on
 * a few rows the planner rightly prefers to read the table). SQLite's planner reads no statistics
 * the service would have gathered: its plans are the same on any number of rows.
 */
export async function explainAll(
  db: Db,
  statements: readonly Statement[],
  options: { preferIndexes?: boolean } = {},
): Promise<Plan[]> {
  const seen = new Map<string, Plan>();
  for (const statement of statements) {
    if (SKIP.test(statement.sql) || seen.has(statement.sql)) continue;
    const plan =
      db.dialect === 'postgres'
        ? await explainPostgres(db, statement, options.preferIndexes ?? false)
        : await explainSqlite(db.kysely, statement);
    seen.set(statement.sql, { sql: squeeze(statement.sql), plan, flags: flagsOf(db.dialect, plan) });
  }
  return [...seen.values()];
}

const squeeze = (text: string) => text.replace(/\s+/g, ' ').trim();

async function explainSqlite(db: Kysely<Database>, statement: Statement): Promise<string[]> {
  const result = await db.executeQuery<{ id: number; parent: number; detail: string }>(
    CompiledQuery.raw(`explain query plan ${statement.sql}`, [...statement.parameters]),
  );
  const depth = new Map<number, number>([[0, -1]]);
  return result.rows.map((row) => {
    const level = (depth.get(row.parent) ?? -1) + 1;
    depth.set(row.id, level);
    return `${'  '.repeat(level)}${row.detail}`;
  });
}

/**
 * PostgreSQL. The delivery claim arrives as one simple-protocol text of two statements, its
 * settings first: they are applied in a transaction, and the claim explained under them.
 */
async function explainPostgres(db: Db, statement: Statement, preferIndexes: boolean): Promise<string[]> {
  const client = await db.pool!.connect();
  try {
    await client.query('begin');
    if (preferIndexes)
      await client.query(
        'set local enable_seqscan = off; set local enable_bitmapscan = off; set local enable_sort = off',
      );
    let text = statement.sql;
    const split = /^\s*(select set_config\([^;]*);([\s\S]*)$/i.exec(text);
    if (split) {
      await client.query(split[1]);
      text = split[2];
    }
    const result = await client.query<{ 'QUERY PLAN': string }>(`explain ${text}`, [...statement.parameters]);
    return result.rows.map((row) => row['QUERY PLAN']);
  } finally {
    await client.query('rollback');
    client.release();
  }
}

/** Full scans and sorts: read or sort a whole table (or a whole index) instead of seeking. */
export function flagsOf(dialect: Db['dialect'], plan: readonly string[]): string[] {
  const flags: string[] = [];
  // SQLite: a scan of a subquery's rows (a co-routine or materialised view of the statement's own
  // values), of a table-valued function or of a CTE reads what the statement made, not a table.
  const own = new Set(['json_each', 'CONSTANT']);
  for (const line of plan) {
    const made = /^\s*(?:CO-ROUTINE|MATERIALIZE) (\S+)/.exec(line);
    if (made) own.add(made[1]);
  }
  for (const line of plan) {
    if (dialect === 'sqlite') {
      const scan = /^\s*SCAN (\S+)/.exec(line);
      if (scan && !own.has(scan[1])) flags.push(line.trim());
      if (/USE TEMP B-TREE/.test(line)) flags.push(line.trim());
    } else {
      if (/Seq Scan on (?!json)/.test(line)) flags.push(line.trim());
      if (/^\s*(->\s*)?(Sort|Incremental Sort)\b/.test(line)) flags.push(line.trim());
    }
  }
  return flags;
}
