// The delivery log as the API and the dashboard show it: a subscription's entries newest first, a
// page at a time (cursor pagination), optionally filtered; for the dashboard each is marked
// retryable or not, and the last 24 hours of finished attempts are counted per hour and outcome,
// for the chart. Reads only, along the (subscription_id, created_at, id) and (subscription_id,
// event_id) indexes.
import type { FastifyRequest } from 'fastify';
import { sql, type Kysely } from 'kysely';
import type { Config } from '../config.ts';
import type { Database, Executor, Row } from '../db/schema.ts';
import { cursorPage } from '../http/cursor.ts';
import type { DeliveryStatus } from './queue.ts';

/** An API log entry: a delivery row without its lease, which is the worker's business. */
export type LogRow = Omit<Row<'webhook_deliveries'>, 'locked_until' | 'lease_token'>;

export function logView(row: LogRow) {
  return {
    id: Number(row.id),
    subscription: row.subscription_id,
    event_id: row.event_id,
    event_type: row.event_type,
    payload: JSON.parse(row.payload) as Record<string, unknown>,
    attempt: row.attempt,
    next_retry_at: row.next_retry_at,
    status_code: row.status_code,
    response_body: row.response_body,
    duration_ms: row.duration_ms,
    created_at: row.created_at,
    status: row.status,
  };
}

export interface LogFilter {
  status?: DeliveryStatus;
  event_type?: string;
  event_id?: string;
}

/** A subscription's log entries matching `filter`, unordered (the caller pages them). */
export function deliveryLog(executor: Executor, subscriptionId: string, filter: LogFilter) {
  let query = executor
    .selectFrom('webhook_deliveries')
    .select([
      'id',
      'subscription_id',
      'event_id',
      'event_type',
      'payload',
      'attempt',
      'next_retry_at',
      'status_code',
      'response_body',
      'duration_ms',
      'created_at',
      'status',
    ])
    .where('subscription_id', '=', subscriptionId);
  if (filter.status) query = query.where('status', '=', filter.status);
  if (filter.event_type) query = query.where('event_type', '=', filter.event_type);
  if (filter.event_id) query = query.where('event_id', '=', filter.event_id);
  return query;
}

export const LOG_STATUSES: readonly DeliveryStatus[] = ['pending', 'success', 'failed', 'dead_letter'];
/** The outcomes the chart counts (a pending row is an attempt still to come). */
export const OUTCOMES = ['success', 'failed', 'dead_letter'] as const;
export type Outcome = (typeof OUTCOMES)[number];

export interface LogEntry {
  id: number;
  event_id: string;
  event_type: string;
  attempt: number;
  status: DeliveryStatus;
  status_code: number | null;
  duration_ms: number | null;
  next_retry_at: string | null;
  created_at: string;
  /** A dead letter that is its event's newest entry, or a failed entry whose next attempt still waits. */
  retryable: boolean;
}

export async function deliveryLogPage(
  db: Kysely<Database>,
  config: Pick<Config, 'baseUrl' | 'secretKey'>,
  request: FastifyRequest,
  subscriptionId: string,
  status: DeliveryStatus | null,
) {
  let query = db
    .selectFrom('webhook_deliveries')
    .select([
      'id',
      'event_id',
      'event_type',
      'attempt',
      'status',
      'status_code',
      'duration_ms',
      'next_retry_at',
      'created_at',
    ])
    .where('subscription_id', '=', subscriptionId);
  if (status) query = query.where('status', '=', status);
  const page = await cursorPage({ request, query, baseUrl: config.baseUrl, secret: config.secretKey! });
  const rows = page.results.map((row) => ({ ...row, id: Number(row.id) }));
  const retryable = await retryableIds(db, subscriptionId, rows);
  return {
    next: page.next,
    previous: page.previous,
    entries: rows.map((row): LogEntry => ({ ...row, retryable: retryable.has(row.id) })),
  };
}

/** Which of `rows` a retry would act on (manual-delivery.ts retryDelivery), in one query. */
async function retryableIds(
  db: Kysely<Database>,
  subscriptionId: string,
  rows: readonly { id: number; event_id: string; status: string }[],
) {
  const candidates = rows.filter((row) => row.status === 'failed' || row.status === 'dead_letter');
  const ids = new Set<number>();
  if (candidates.length === 0) return ids;
  const cycle = await db
    .selectFrom('webhook_deliveries')
    .select(['id', 'event_id', 'status'])
    .where('subscription_id', '=', subscriptionId)
    .where('event_id', 'in', [...new Set(candidates.map((row) => row.event_id))])
    .execute();
  for (const row of candidates) {
    const later = cycle.filter((other) => other.event_id === row.event_id && Number(other.id) > row.id);
    if (row.status === 'dead_letter' ? later.length === 0 : later.some((other) => other.status === 'pending'))
      ids.add(row.id);
  }
  return ids;
}

export interface HourBucket {
  /** The hour's start, ISO 8601 UTC ("2025-06-01T14:00:00.000Z"). */
  hour: string;
  counts: Record<Outcome, number>;
}

/** The 24 hours up to now (the current one last), each with its finished attempts by outcome. */
export async function hourlyOutcomes(
  db: Kysely<Database>,
  subscriptionId: string,
  now = Date.now(),
): Promise<HourBucket[]> {
  const currentHour = Math.floor(now / 3600_000) * 3600_000;
  const buckets: HourBucket[] = [];
  for (let i = 23; i >= 0; i--) {
    buckets.push({
      hour: new Date(currentHour - i * 3600_000).toISOString(),
      counts: { success: 0, failed: 0, dead_letter: 0 },
    });
  }
  const byHour = new Map(buckets.map((bucket) => [bucket.hour.slice(0, 13), bucket]));
  // created_at is a fixed-width ISO string in both dialects: its first 13 characters name the hour.
  const rows = await sql<{
    hour: string;
    status: string;
    n: number | string;
  }>`select substr(created_at, 1, 13) as hour, status, count(*) as n
    from webhook_deliveries
    where subscription_id = ${subscriptionId} and created_at >= ${buckets[0].hour} and status <> 'pending'
    group by substr(created_at, 1, 13), status`.execute(db);
  for (const row of rows.rows) {
    const bucket = byHour.get(row.hour);
    if (bucket && (OUTCOMES as readonly string[]).includes(row.status))
      bucket.counts[row.status as Outcome] += Number(row.n);
  }
  return buckets;
}
