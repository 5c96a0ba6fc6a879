// Writes attempt results in batches: a handful of statements per batch, not several per result.
// Per batch: one UPDATE of every delivery row whose lease still holds (RETURNING which ones), one
// INSERT of the next attempts of the failed ones, and the consecutive-failure counters, one
// statement for the subscriptions that only succeeded and one per subscription that failed (the
// auto-disable check needs its new count). On PostgreSQL a batch of successes is one statement in
// all (data-modifying CTEs, atomic without BEGIN/COMMIT): each statement there is a round trip to a
// database that shares the machine, and round trips, not rows, bound the delivery rate.
import { sql, type Transaction } from 'kysely';
import type { AppContext } from '../app-context.ts';
import type { Database, Executor, Row } from '../db/schema.ts';
import { autoDisable } from './auto-disable.ts';
import { ASYNC_COMMIT, outcomeOf, type AttemptResult } from './queue.ts';

/** One row of the batch as the SQL reads it (JSON: one parameter whatever the batch size). */
type ResultRow = Pick<
  Row<'webhook_deliveries'>,
  'id' | 'status' | 'next_retry_at' | 'status_code' | 'response_body' | 'duration_ms' | 'created_at'
> & {
  /** The lease token the row must still hold for the result to be written. */
  token: string;
};

function resultRows(results: readonly AttemptResult[], settings: AppContext['config']['webhooks']): ResultRow[] {
  return results.map((result) => {
    const { status, nextRetryAt } = outcomeOf(result, settings);
    return {
      id: result.delivery.id,
      token: result.delivery.lease_token,
      status,
      next_retry_at: nextRetryAt,
      status_code: result.statusCode,
      response_body: result.responseBody,
      duration_ms: result.durationMs,
      created_at: result.attemptedAt,
    };
  });
}

// The rows of the batch, typed, from the one JSON parameter.
const sqliteRows = (json: string) => sql`(
  select value ->> 'id' as id, value ->> 'token' as token, value ->> 'status' as status,
    value ->> 'next_retry_at' as next_retry_at, value ->> 'status_code' as status_code,
    value ->> 'response_body' as response_body, value ->> 'duration_ms' as duration_ms,
    value ->> 'created_at' as created_at
  from json_each(${json}))`;
const postgresRows = (json: string) => sql`json_to_recordset(${json}::json) as r(id integer, token text, status text,
  next_retry_at text, status_code integer, response_body text, duration_ms integer, created_at text)`;

/** The UPDATE of the delivery rows, where the lease token still matches and the row is still pending. */
// (SQLite's RETURNING names the updated table's columns unqualified; PostgreSQL needs the alias.)
function updateDeliveries(postgres: boolean, json: string, returning = postgres ? sql`d.id` : sql`id`) {
  return sql`update webhook_deliveries as d set status = r.status, next_retry_at = r.next_retry_at,
      status_code = r.status_code, response_body = r.response_body, duration_ms = r.duration_ms,
      created_at = r.created_at, locked_until = null, lease_token = null
    from ${postgres ? postgresRows(json) : sql`${sqliteRows(json)} as r`}
    where d.id = r.id and d.lease_token = r.token and d.status = 'pending'
    returning ${returning}`;
}

/**
 * PostgreSQL, a batch of successes only: the rows and the reset of their subscriptions' counters in
 * one statement. Counters are locked in id order (ORDER BY … FOR UPDATE), as in the transactional
 * path.
 */
const succeededOnly = (
  json: string,
) => sql`with done as (${updateDeliveries(true, json, sql`d.id, d.subscription_id`)}),
    reset as (update webhook_subscriptions set consecutive_failures = 0 where id in (
      select id from webhook_subscriptions where id in (select subscription_id from done) and consecutive_failures <> 0
      order by id for update))
  select count(*), ${ASYNC_COMMIT} from done`;
/** succeededOnly's text, compiled on first use; its one parameter ($1) is the batch's JSON. */
let succeededText: string | null = null;

/**
 * Writes a batch of results (sorted by subscription, in the order they finished within one).
 * Rows whose lease was lost (another worker owns them now) are left alone and count for nothing.
 */
export async function writeResults(ctx: AppContext, results: readonly AttemptResult[]): Promise<Set<string>> {
  const settings = ctx.config.webhooks;
  const postgres = ctx.db.dialect === 'postgres';
  const json = JSON.stringify(resultRows(results, settings));
  if (postgres && results.every((result) => result.ok)) {
    // A named statement: each pooled connection parses it once and, after five trial plans, reuses
    // one generic plan (the batch is one JSON parameter, so no plan depends on the values).
    succeededText ??= succeededOnly('').compile(ctx.db.kysely).sql;
    await ctx.db.pool!.query({ name: 'webhook-results-succeeded', text: succeededText, values: [json] });
    return new Set();
  }
  return ctx.db.kysely.transaction().execute(async (trx) => {
    // A result lost in a database crash is delivered again: no need to wait for the WAL flush
    // (ASYNC_COMMIT in queue.ts says why that is safe). The auto-disable and its e-mail commit or
    // are lost with the failures that caused them, and are counted again on the repeated attempts.
    if (postgres) await sql`set local synchronous_commit = off`.execute(trx);
    const updated = await updateDeliveries(postgres, json).execute(trx);
    const written = new Set((updated.rows as { id: number | string }[]).map((row) => Number(row.id)));
    if (written.size === 0) return new Set<string>();
    const mine = results.filter((result) => written.has(result.delivery.id));
    const failedIds = mine
      .filter((result) => result.attempted && !result.ok && result.delivery.attempt < settings.maxRetries)
      .map((r) => r.delivery.id);
    if (failedIds.length > 0) await queueNextAttempts(trx, postgres, failedIds);
    return countFailures(ctx, trx, mine);
  });
}

/** The next attempt of each failed row: a copy of it, pending, due when its result said. */
async function queueNextAttempts(trx: Executor, postgres: boolean, ids: number[]): Promise<void> {
  const list = JSON.stringify(ids);
  const inList = postgres
    ? sql`select value::integer from json_array_elements_text(${list}::json)`
    : sql`select value from json_each(${list})`;
  await sql`insert into webhook_deliveries (subscription_id, event_id, event_type, payload, attempt, status, next_retry_at, created_at)
    select subscription_id, event_id, event_type, payload, attempt + 1, 'pending', next_retry_at, created_at
    from webhook_deliveries where id in (${inList}) and status = 'failed' order by id`.execute(trx);
}

/**
 * Keeps each subscription's consecutive-failure count as if the results were applied one by one:
 * a success resets it, a failure adds one, and the subscription is disabled by the failure that
 * brings it to SERVICE_WEBHOOKS_AUTO_DISABLE_AFTER, or by a 410 Gone answer. Subscriptions are updated in id order (the
 * results are sorted), so concurrent workers on PostgreSQL cannot deadlock on them.
 */
async function countFailures(
  ctx: AppContext,
  trx: Transaction<Database>,
  results: readonly AttemptResult[],
): Promise<Set<string>> {
  const disabled = new Set<string>();
  const postgres = ctx.db.dialect === 'postgres';
  const runs = new Map<string, { succeeded: boolean; failures: number; gone: boolean }>();
  for (const result of results) {
    if (!result.attempted) continue;
    const run = runs.get(result.delivery.subscription_id) ?? { succeeded: false, failures: 0, gone: false };
    if (result.ok) {
      run.succeeded = true;
      run.failures = 0;
    } else {
      run.failures++;
      if (result.statusCode === 410) run.gone = true;
    }
    runs.set(result.delivery.subscription_id, run);
  }
  const resets = [...runs].filter(([, run]) => run.failures === 0).map(([id]) => id);
  if (resets.length > 0) {
    const list = JSON.stringify(resets);
    const inList = postgres
      ? sql`select json_array_elements_text(${list}::json)`
      : sql`select value from json_each(${list})`;
    await sql`update webhook_subscriptions set consecutive_failures = 0 where id in (${inList}) and consecutive_failures <> 0`.execute(
      trx,
    );
  }
  for (const [subscriptionId, run] of runs) {
    if (run.failures === 0) continue;
    const counted = (
      await sql<
        Pick<Row<'webhook_subscriptions'>, 'consecutive_failures' | 'is_active' | 'team_id' | 'url'>
      >`update webhook_subscriptions
        set consecutive_failures = ${run.succeeded ? sql`0` : sql`consecutive_failures`} + ${run.failures}
        where id = ${subscriptionId} returning consecutive_failures, is_active, team_id, url`.execute(trx)
    ).rows[0];
    if (!counted) continue;
    const threshold = ctx.config.webhooks.autoDisableAfter;
    if (counted.is_active !== 1 || (!run.gone && counted.consecutive_failures < threshold)) continue;
    // The count at the failure that reached the threshold (one by one, that failure disabled it).
    const before = counted.consecutive_failures - run.failures;
    const cause = run.gone
      ? { gone: true as const, failures: counted.consecutive_failures }
      : { failures: Math.max(before + 1, threshold) };
    if (await autoDisable(ctx, trx, subscriptionId, counted, cause)) disabled.add(subscriptionId);
  }
  return disabled;
}

interface Pending {
  result: AttemptResult;
  /** With true when this batch disabled the result's subscription. */
  resolve: (disabled: boolean) => void;
  reject: (error: unknown) => void;
}

const MAX_WRITE_BATCH = 500;

export interface ResultWriterOptions {
  /** Write as soon as this many results wait (default 1: at once). */
  batch?: number;
  /** Otherwise write once the oldest waiting result is this old. */
  delayMs?: number;
}

/**
 * Micro-batched result writes: results that finish while a batch is being written go into the
 * next one, so under load one transaction carries many results (one commit instead of hundreds).
 * A batch is written once `batch` results wait, or `delayMs` after the first of them: a batch's
 * statements cost the same for 3 rows as for 30, and nothing waits on a result's write but its
 * row's lease (the delivery worker frees the slot when the attempt ends).
 */
export class ResultWriter {
  readonly #ctx: AppContext;
  readonly #batch: number;
  readonly #delayMs: number;
  #queue: Pending[] = [];
  #running: Promise<void> | null = null;
  #timer: NodeJS.Timeout | null = null;
  #draining = false;

  constructor(ctx: AppContext, options: ResultWriterOptions = {}) {
    this.#ctx = ctx;
    this.#batch = Math.min(MAX_WRITE_BATCH, Math.max(1, options.batch ?? 1));
    this.#delayMs = options.delayMs ?? 0;
  }

  /** Resolves once the result is written: with true when its batch disabled its subscription. */
  add(result: AttemptResult): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ result, resolve, reject });
      this.#schedule();
    });
  }

  get idle(): boolean {
    return this.#running === null && this.#queue.length === 0;
  }

  /** Writes everything waiting now, and whatever is added until then. */
  async drain(): Promise<void> {
    this.#draining = true;
    try {
      this.#schedule();
      while (this.#running) await this.#running;
    } finally {
      this.#draining = false;
    }
  }

  /** Writes what waits now, without waiting for a full batch (someone needs a result written). */
  flush(): void {
    if (this.#queue.length > 0) this.#start();
  }

  #schedule(): void {
    if (this.#running || this.#queue.length === 0) return;
    if (this.#draining || this.#queue.length >= this.#batch || this.#delayMs <= 0) this.#start();
    else this.#timer ??= setTimeout(() => this.#start(), this.#delayMs);
  }

  #start(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    if (this.#running || this.#queue.length === 0) return;
    this.#running = this.#flush().finally(() => {
      this.#running = null;
      this.#schedule();
    });
  }

  async #flush(): Promise<void> {
    // Results that complete in the same turn of the event loop join one batch: without this pause
    // each batch held the one or two results ready at that instant, and the commits, not the HTTP
    // requests, bounded the delivery rate.
    await new Promise((resolve) => setImmediate(resolve));
    const batch = this.#queue.splice(0, MAX_WRITE_BATCH);
    // Stable sort: one subscription's results stay in the order they finished.
    batch.sort((a, b) => compare(a.result.delivery.subscription_id, b.result.delivery.subscription_id));
    try {
      const disabled = await writeResults(
        this.#ctx,
        batch.map((item) => item.result),
      );
      for (const item of batch) item.resolve(disabled.has(item.result.delivery.subscription_id));
    } catch {
      // One bad result (or a lock conflict) must not cost the others: write them one by one. A row
      // whose write still fails stays pending under its lease and is attempted again after it.
      for (const item of batch) {
        try {
          item.resolve((await writeResults(this.#ctx, [item.result])).size > 0);
        } catch (error) {
          item.reject(error);
        }
      }
    }
  }
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
