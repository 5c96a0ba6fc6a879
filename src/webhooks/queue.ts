// The delivery queue is the delivery log: a `pending` row is an attempt due at next_retry_at.
// Workers claim due rows with a lease (locked_until + lease_token) in one short statement that is
// committed before any HTTP call, and write a result only while their lease token still matches,
// so a stalled worker cannot overwrite a newer result and a crashed worker's rows are claimed again
// once the lease expires.
import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { QueryResult } from 'pg';
import type { Actor } from '../audit/actor.ts';
import { recordAudit } from '../audit/record.ts';
import { purgeOlderThan } from '../db/batched-delete.ts';
import type { Db as Connection, DialectName } from '../db/connection.ts';
import type { Database, Executor, NewRow, Row } from '../db/schema.ts';
import { ConflictError } from '../util/domain-errors.ts';
import { isoAfter, nowIso } from '../util/time.ts';

/** A due row as a worker claimed it: what its attempt sends, and the lease it holds. */
export type ClaimedDelivery = Pick<
  Row<'webhook_deliveries'>,
  'id' | 'subscription_id' | 'event_id' | 'event_type' | 'payload' | 'attempt'
> & { lease_token: string };

/** What an attempt needs of its subscription (and team), read when its rows are claimed. */
export type DeliveryTarget = Pick<
  Row<'webhook_subscriptions'>,
  | 'id'
  | 'team_id'
  | 'url'
  | 'secret_encrypted'
  | 'previous_secret_encrypted'
  | 'previous_secret_expires_at'
  | 'standard_webhooks'
> & { subscription_active: number; team_active: number };

/** The target as a worker knows it after disabling it (its rows are dead-lettered unsent). */
export const asInactive = (target: DeliveryTarget): DeliveryTarget => ({ ...target, subscription_active: 0 });

export interface Claim {
  rows: ClaimedDelivery[];
  /** By subscription id; a deleted subscription is missing. */
  targets: Map<string, DeliveryTarget>;
}

const TARGET_COLUMNS_TEXT = `s.id, s.team_id, s.url, s.secret_encrypted, s.previous_secret_encrypted, s.previous_secret_expires_at, s.standard_webhooks,
  s.is_active as subscription_active, t.is_active as team_active`;
const TARGET_COLUMNS = sql.raw(TARGET_COLUMNS_TEXT);

/**
 * PostgreSQL: this transaction's commit does not wait for its WAL flush (synchronous_commit off,
 * for this transaction only; `set_config(…, true)` is SET LOCAL inside a statement, so it costs no
 * round trip). Used by the worker's own bookkeeping only — claims, lease releases and result
 * writes, never emitting events or business transactions. A crash of the database can lose the
 * last such commits (well under a second of them, always a suffix of the commit order: the WAL is
 * sequential); a lost claim or result leaves its row pending, so the event is delivered again,
 * which at-least-once delivery allows (receivers dedupe on the event id). docs/webhooks.md.
 */
export const ASYNC_COMMIT = sql`set_config('synchronous_commit', 'off', true)`;

/** A string literal for the one simple-protocol statement below (its values are ours: times, a UUID). */
const literal = (value: string) => `'${value.replaceAll("'", "''")}'`;

/**
 * Claims up to `limit` due rows for `leaseSeconds`, with their subscriptions. The claim commits on
 * its own, before any HTTP request.
 *
 * PostgreSQL: one round trip. The claim (in a CTE, the subscriptions joined to it) follows a
 * `set_config` in the same simple-protocol message, i.e. in one implicit transaction: the settings
 * hold for the claim only. They are the asynchronous commit (ASYNC_COMMIT), and no bitmap scans: the
 * queue's statistics lag behind a burst (autovacuum analyses about once a minute), and with stale
 * ones the planner reads and sorts every due row for each claim (the worker's slots idle
 * meanwhile) instead of walking the due index in order and stopping at `limit`, which reads only
 * the rows it takes; the walk also marks dead index entries, which a bitmap scan never does.
 * SKIP LOCKED lets many workers claim disjoint batches without waiting on each other. The candidates
 * are an array, computed once: as `id in (subquery)` the planner may re-run the subquery for each row
 * of a nested loop, each run skipping the rows already updated, and one claim would take far more
 * than `limit` (the mail outbox's claim did exactly that).
 *
 * SQLite: one writer at a time, so the single UPDATE … RETURNING is already atomic; the
 * subscriptions are a second, in-process, read.
 */
export async function claimDue(db: Connection, limit: number, leaseSeconds: number): Promise<Claim> {
  const now = nowIso();
  const until = isoAfter(leaseSeconds);
  const token = randomUUID();
  const targets = new Map<string, DeliveryTarget>();
  if (db.pool) {
    const text = `select set_config('enable_bitmapscan', 'off', true), set_config('synchronous_commit', 'off', true);
      with c as (update webhook_deliveries set locked_until = ${literal(until)}, lease_token = ${literal(token)}
        where id = any(array(
          select id from webhook_deliveries
          where status = 'pending' and next_retry_at <= ${literal(now)} and (locked_until is null or locked_until < ${literal(now)})
          order by next_retry_at limit ${Math.max(1, Math.trunc(limit))} for update skip locked
        ))
        returning id, subscription_id, event_id, event_type, payload, attempt, lease_token)
      select c.*, (select row_to_json(x) from (select ${TARGET_COLUMNS_TEXT} from webhook_subscriptions s join teams t on t.id = s.team_id
        where s.id = c.subscription_id) x) as target
      from c order by c.id`;
    const results = (await db.pool.query(text)) as unknown as QueryResult<
      ClaimedDelivery & { target: DeliveryTarget | null }
    >[];
    const rows = results[1].rows.map(({ target, ...row }) => {
      if (target) targets.set(target.id, target);
      return row;
    });
    return { rows, targets };
  }
  const rows = (
    await sql<ClaimedDelivery>`update webhook_deliveries set locked_until = ${until}, lease_token = ${token}
      where id in (
        select id from webhook_deliveries
        where status = 'pending' and next_retry_at <= ${now} and (locked_until is null or locked_until < ${now})
        order by next_retry_at limit ${limit}
      )
      returning id, subscription_id, event_id, event_type, payload, attempt, lease_token`.execute(db.kysely)
  ).rows;
  if (rows.length === 0) return { rows, targets };
  const ids = JSON.stringify([...new Set(rows.map((row) => row.subscription_id))]);
  const loaded =
    await sql<DeliveryTarget>`select ${TARGET_COLUMNS} from webhook_subscriptions s join teams t on t.id = s.team_id
    where s.id in (select value from json_each(${ids}))`.execute(db.kysely);
  for (const target of loaded.rows) targets.set(target.id, target);
  return { rows, targets };
}

/**
 * Gives back claimed rows that were never attempted (a worker stopping with rows claimed ahead), so
 * any worker can claim them at once instead of after their lease. Only where the lease is still
 * ours (the token matches) and the row is still pending.
 */
export async function releaseClaims(
  db: Kysely<Database>,
  dialect: DialectName,
  rows: readonly Pick<ClaimedDelivery, 'id' | 'lease_token'>[],
): Promise<void> {
  if (rows.length === 0) return;
  const json = JSON.stringify(rows.map((row) => ({ id: row.id, token: row.lease_token })));
  const postgres = dialect === 'postgres';
  const from = postgres
    ? sql`json_to_recordset(${json}::json) as r(id integer, token text)`
    : sql`(select value ->> 'id' as id, value ->> 'token' as token from json_each(${json})) as r`;
  await sql`update webhook_deliveries as d set locked_until = null, lease_token = null from ${from}
    where d.id = r.id and d.lease_token = r.token and d.status = 'pending'
    ${postgres ? sql`returning ${ASYNC_COMMIT}` : sql``}`.execute(db);
}

export interface AttemptResult {
  delivery: ClaimedDelivery;
  /** null: not attempted (the subscription or team is inactive). */
  statusCode: number | null;
  ok: boolean;
  responseBody: string | null;
  durationMs: number | null;
  attemptedAt: string;
  attempted: boolean;
  /** A 429 or 503 answer's Retry-After, in seconds from the attempt (retry-after.ts); the next attempt waits at least this long. */
  retryAfterSeconds?: number | null;
}

export interface Schedule {
  retryDelays: readonly number[];
  maxRetries: number;
}

/** Where a delivery row stands: `pending` rows are the queue; the others, the log. */
export type DeliveryStatus = Row<'webhook_deliveries'>['status'];

/** Where an attempt leaves its row: success, failed (with the next attempt's time) or dead_letter. */
export function outcomeOf(
  result: AttemptResult,
  schedule: Schedule,
): { status: DeliveryStatus; nextRetryAt: string | null } {
  if (result.ok) return { status: 'success', nextRetryAt: null };
  const attempt = result.delivery.attempt;
  if (!result.attempted || attempt >= schedule.maxRetries) return { status: 'dead_letter', nextRetryAt: null };
  // retryDelays[n] is the delay before attempt n + 1 (index 0, attempt 1, is normally 0); a
  // receiver's Retry-After can only lengthen it.
  const delay = Math.max(schedule.retryDelays[attempt], result.retryAfterSeconds ?? 0);
  return { status: 'failed', nextRetryAt: isoAfter(delay, Date.parse(result.attemptedAt)) };
}

/**
 * Starts a fresh cycle (attempt 1, due now) for a dead letter. Only the newest row of that event's
 * cycle can be retried, so two retries of one dead letter cannot start two cycles.
 */
export async function retryDeadLetter(
  trx: Executor,
  subscriptionId: string,
  logId: number,
  actor: Actor,
  teamId: string,
) {
  const row = await trx
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('id', '=', logId)
    .where('subscription_id', '=', subscriptionId)
    .executeTakeFirst();
  if (!row) return undefined;
  if (row.status !== 'dead_letter')
    throw new ConflictError(`Only a dead_letter entry can be retried; this one is ${row.status}.`);
  const newer = await trx
    .selectFrom('webhook_deliveries')
    .select('id')
    .where('subscription_id', '=', subscriptionId)
    .where('event_id', '=', row.event_id)
    .where('id', '>', row.id)
    .executeTakeFirst();
  if (newer) throw new ConflictError('This event has already been retried; retry its newest entry instead.');
  const queued = await queueFirstAttempt(trx, {
    subscription_id: subscriptionId,
    event_id: row.event_id,
    event_type: row.event_type,
    payload: row.payload,
  });
  const data = {
    subscription_id: subscriptionId,
    event_id: row.event_id,
    event_type: row.event_type,
    retry_id: queued.id,
  };
  await recordAudit(trx, actor, { teamId, action: 'webhook.delivery.retried', targetId: logId, data });
  return queued;
}

/**
 * Queues attempt 1 of an event to one subscription, due `now`; returns the new log entry. Events
 * reach their subscriptions through the fan-out (fan-out.ts); this is for one subscription by hand.
 */
export async function queueFirstAttempt(
  executor: Executor,
  delivery: Pick<NewRow<'webhook_deliveries'>, 'subscription_id' | 'event_id' | 'event_type' | 'payload'>,
  now = nowIso(),
) {
  const values = { ...delivery, attempt: 1, status: 'pending' as const, next_retry_at: now, created_at: now };
  const inserted = await executor
    .insertInto('webhook_deliveries')
    .values(values)
    .returning('id')
    .executeTakeFirstOrThrow();
  return { ...values, id: Number(inserted.id), status_code: null, response_body: null, duration_ms: null };
}

/** Retries every dead letter of a subscription that is the newest entry of its event. */
export async function retryAllDeadLetters(
  trx: Executor,
  subscriptionId: string,
  actor: Actor,
  teamId: string,
): Promise<number> {
  const dead = await trx
    .selectFrom('webhook_deliveries as d')
    .select('d.id')
    .where('d.subscription_id', '=', subscriptionId)
    .where('d.status', '=', 'dead_letter')
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('webhook_deliveries as n')
            .select('n.id')
            .whereRef('n.subscription_id', '=', 'd.subscription_id')
            .whereRef('n.event_id', '=', 'd.event_id')
            .whereRef('n.id', '>', 'd.id'),
        ),
      ),
    )
    .orderBy('d.id')
    .execute();
  for (const { id } of dead) await retryDeadLetter(trx, subscriptionId, Number(id), actor, teamId);
  return dead.length;
}

/**
 * Deletes finished log rows older than the retention (pending rows are the queue: kept) along
 * webhook_deliveries_finished_idx, and events older than the retention along events_created_idx,
 * in batches (db/batched-delete.ts): the work is proportional to the rows deleted, not to the
 * number of subscriptions or teams, and no statement holds the writer long.
 */
export async function purgeDeliveryLogs(
  db: Executor,
  retentionDays: number,
): Promise<{ deliveries: number; events: number }> {
  const cutoff = isoAfter(-retentionDays * 86400);
  const deliveries = await purgeOlderThan(db, 'webhook_deliveries', 'created_at', cutoff, {
    also: sql`status <> 'pending'`,
  });
  const events = await purgeOlderThan(db, 'events', 'created_at', cutoff);
  return { deliveries, events };
}
