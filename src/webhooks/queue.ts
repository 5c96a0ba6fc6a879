// The delivery queue is the delivery log: a `pending` row is an attempt due at next_retry_at.
// Workers claim due rows with a lease (locked_until + lease_token) in one short statement that is
// committed before any HTTP call, and write a result only while their lease token still matches,
// so a stalled worker cannot overwrite a newer result and a crashed worker's rows are claimed again
// once the lease expires.
import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { DialectName } from '../db/connection.ts';
import type { Database, WebhookDeliveryStatus } from '../db/schema.ts';
import { isoAfter, nowIso } from '../util/time.ts';

type Db = Kysely<Database> | Transaction<Database>;

export interface ClaimedDelivery {
  id: number;
  subscription_id: string;
  event_id: string;
  event_type: string;
  payload: string;
  attempt: number;
  lease_token: string;
}

/** Claims up to `limit` due rows for `leaseSeconds`. */
export async function claimDue(db: Kysely<Database>, dialect: DialectName, limit: number, leaseSeconds: number): Promise<ClaimedDelivery[]> {
  const now = nowIso();
  const until = isoAfter(leaseSeconds);
  const token = randomUUID();
  // PostgreSQL: SKIP LOCKED lets many workers claim disjoint batches without waiting on each other.
  // SQLite: one writer at a time, so the single UPDATE … RETURNING is already atomic.
  const lock = dialect === 'postgres' ? sql`for update skip locked` : sql``;
  const result = await sql<ClaimedDelivery>`
    update webhook_deliveries set locked_until = ${until}, lease_token = ${token}
    where id in (
      select id from webhook_deliveries
      where status = 'pending' and next_retry_at <= ${now} and (locked_until is null or locked_until < ${now})
      order by next_retry_at limit ${limit} ${lock}
    )
    returning id, subscription_id, event_id, event_type, payload, attempt, lease_token`.execute(db);
  return result.rows;
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
}

export interface Schedule {
  retryDelays: readonly number[];
  maxRetries: number;
}

/** Where an attempt leaves its row: success, failed (with the next attempt's time) or dead_letter. */
export function outcomeOf(result: AttemptResult, schedule: Schedule): { status: WebhookDeliveryStatus; nextRetryAt: string | null } {
  if (result.ok) return { status: 'success', nextRetryAt: null };
  const attempt = result.delivery.attempt;
  if (!result.attempted || attempt >= schedule.maxRetries) return { status: 'dead_letter', nextRetryAt: null };
  // retryDelays[n] is the delay before attempt n + 1 (index 0, attempt 1, is normally 0).
  return { status: 'failed', nextRetryAt: isoAfter(schedule.retryDelays[attempt], Date.parse(result.attemptedAt)) };
}

/**
 * Writes one attempt's result where the lease still holds, and queues the next attempt after a
 * failure. Returns false when the lease was lost (another worker owns the row now): nothing written.
 */
export async function recordResult(trx: Db, result: AttemptResult, schedule: Schedule): Promise<{ written: boolean; status: WebhookDeliveryStatus }> {
  const { delivery } = result;
  const { status, nextRetryAt } = outcomeOf(result, schedule);
  const updated = await trx
    .updateTable('webhook_deliveries')
    .set({
      status,
      next_retry_at: nextRetryAt,
      status_code: result.statusCode,
      response_body: result.responseBody,
      duration_ms: result.durationMs,
      created_at: result.attemptedAt,
      locked_until: null,
      lease_token: null,
    })
    .where('id', '=', delivery.id)
    .where('lease_token', '=', delivery.lease_token)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  if (Number(updated.numUpdatedRows) === 0) return { written: false, status };
  if (status === 'failed') {
    await trx
      .insertInto('webhook_deliveries')
      .values({
        subscription_id: delivery.subscription_id,
        event_id: delivery.event_id,
        event_type: delivery.event_type,
        payload: delivery.payload,
        attempt: delivery.attempt + 1,
        status: 'pending',
        next_retry_at: nextRetryAt,
        created_at: result.attemptedAt,
      })
      .execute();
  }
  return { written: true, status };
}

export class RetryRefused extends Error {}

/**
 * Starts a fresh cycle (attempt 1, due now) for a dead letter. Only the newest row of that event's
 * cycle can be retried, so two retries of one dead letter cannot start two cycles.
 */
export async function retryDeadLetter(trx: Db, subscriptionId: string, logId: number) {
  const row = await trx
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('id', '=', logId)
    .where('subscription_id', '=', subscriptionId)
    .executeTakeFirst();
  if (!row) return undefined;
  if (row.status !== 'dead_letter') throw new RetryRefused(`Only a dead_letter entry can be retried; this one is ${row.status}.`);
  const newer = await trx
    .selectFrom('webhook_deliveries')
    .select('id')
    .where('subscription_id', '=', subscriptionId)
    .where('event_id', '=', row.event_id)
    .where('id', '>', row.id)
    .executeTakeFirst();
  if (newer) throw new RetryRefused('This event has already been retried; retry its newest entry instead.');
  const now = nowIso();
  const values = {
    subscription_id: subscriptionId,
    event_id: row.event_id,
    event_type: row.event_type,
    payload: row.payload,
    attempt: 1,
    status: 'pending' as const,
    next_retry_at: now,
    created_at: now,
  };
  const inserted = await trx.insertInto('webhook_deliveries').values(values).returning('id').executeTakeFirstOrThrow();
  return { ...values, id: Number(inserted.id), status_code: null, response_body: null, duration_ms: null };
}

/** Retries every dead letter of a subscription that is the newest entry of its event. */
export async function retryAllDeadLetters(trx: Db, subscriptionId: string): Promise<number> {
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
  for (const { id } of dead) await retryDeadLetter(trx, subscriptionId, Number(id));
  return dead.length;
}

/** Deletes finished log rows older than the retention (pending rows are the queue: kept). */
export async function purgeDeliveryLogs(db: Db, retentionDays: number): Promise<number> {
  const cutoff = isoAfter(-retentionDays * 86400);
  const result = await db.deleteFrom('webhook_deliveries').where('created_at', '<', cutoff).where('status', '<>', 'pending').executeTakeFirst();
  await db.deleteFrom('events').where('created_at', '<', cutoff).execute();
  return Number(result.numDeletedRows);
}
