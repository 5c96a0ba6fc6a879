// The delivery log as the API shows it, and the two deliveries the API queues by hand for one
// subscription: the retry of a dead letter and a test event.
import type { AppContext } from '../app-context.ts';
import type { Executor, Row } from '../db/schema.ts';
import { newEnvelope, type EventType } from '../events/index.ts';
import { queueFirstAttempt, retryDeadLetter, type DeliveryStatus } from './queue.ts';
import type { SubscriptionRow } from './subscriptions.ts';
import { wakeDeliveryWorkers } from './wake.ts';

/** A log entry: a delivery row without its lease, which is the worker's business. */
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
    .select(['id', 'subscription_id', 'event_id', 'event_type', 'payload', 'attempt', 'next_retry_at', 'status_code', 'response_body', 'duration_ms', 'created_at', 'status'])
    .where('subscription_id', '=', subscriptionId);
  if (filter.status) query = query.where('status', '=', filter.status);
  if (filter.event_type) query = query.where('event_type', '=', filter.event_type);
  if (filter.event_id) query = query.where('event_id', '=', filter.event_id);
  return query;
}

/** A fresh delivery cycle for a dead letter (queue.ts retryDeadLetter); undefined: no such entry. */
export async function retryDelivery(ctx: Pick<AppContext, 'db' | 'wake'>, subscriptionId: string, logId: number): Promise<LogRow | undefined> {
  const queued = await ctx.db.kysely.transaction().execute((trx) => retryDeadLetter(trx, subscriptionId, logId));
  if (queued) void wakeDeliveryWorkers(ctx);
  return queued;
}

/** Queues a real, signed, logged delivery of a test event (`data.test` is true) to this subscription only. */
export async function queueTestDelivery(ctx: Pick<AppContext, 'db' | 'wake'>, subscription: SubscriptionRow, type: EventType): Promise<LogRow> {
  const envelope = newEnvelope(type, subscription.team_id, { test: true });
  const delivery = { subscription_id: subscription.id, event_id: envelope.id, event_type: type, payload: JSON.stringify(envelope) };
  const queued = await queueFirstAttempt(ctx.db.kysely, delivery, envelope.created_at);
  void wakeDeliveryWorkers(ctx);
  return queued;
}
