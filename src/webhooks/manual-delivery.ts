// Deliveries a person asks for: a test event to one subscription, and a retry of a failed or
// dead-letter log entry, from the API and from the dashboard's webhook page. Each writes queue rows
// that the delivery worker sends like any other, signed and logged, and wakes the workers at once.
import type { AppContext } from '../app-context.ts';
import type { Actor } from '../audit/actor.ts';
import { recordAudit } from '../audit/record.ts';
import { EVENT_NAMES, testEnvelope, type EventType } from '../events/index.ts';
import { ConflictError, NotFoundError, ValidationError } from '../util/domain-errors.ts';
import { nowIso } from '../util/time.ts';
import type { LogRow } from './delivery-log.ts';
import { queueFirstAttempt, retryDeadLetter } from './queue.ts';
import type { SubscriptionRow } from './subscriptions.ts';
import { wakeDeliveryWorkers } from './wake.ts';

type Ctx = Pick<AppContext, 'config' | 'db' | 'wake'>;

const DISABLED_SERVICE = 'Webhooks are disabled on this service (SERVICE_WEBHOOKS_ENABLED).';

/**
 * Queues a real delivery of a test event (`data.test` is true) to this subscription only, of
 * `eventType` or else the first type it receives. Refused (conflict) while webhooks are off or the
 * subscription is inactive; a type it does not receive is invalid.
 */
export async function sendTestEvent(
  ctx: Ctx,
  row: SubscriptionRow,
  eventType?: string,
): Promise<{ id: number; eventId: string; type: string }> {
  if (!ctx.config.webhooksEnabled) throw new ConflictError(DISABLED_SERVICE);
  if (row.is_active !== 1) throw new ConflictError('The subscription is inactive.');
  const events = JSON.parse(row.events) as string[];
  const receives: readonly string[] = events[0] === '*' ? EVENT_NAMES : events;
  const type = eventType ?? receives[0];
  if (!receives.includes(type)) {
    const message = `This subscription does not receive "${type}".`;
    throw new ValidationError(message, [{ field: 'event_type', message }]);
  }
  const queued = await queueTestDelivery(ctx, row, type as EventType);
  return { id: queued.id, eventId: queued.event_id, type };
}

/**
 * The one way a test event is queued: a real, signed, logged delivery of `type` (the registry's
 * example `data` with `test: true`) to this subscription only. The caller has checked that the
 * subscription receives the type.
 */
export async function queueTestDelivery(
  ctx: Pick<AppContext, 'db' | 'wake'>,
  row: SubscriptionRow,
  type: EventType,
): Promise<LogRow> {
  const envelope = testEnvelope(type, row.team_id);
  const delivery = {
    subscription_id: row.id,
    event_id: envelope.id,
    event_type: type,
    payload: JSON.stringify(envelope),
  };
  const queued = await queueFirstAttempt(ctx.db.kysely, delivery, envelope.created_at);
  await wakeDeliveryWorkers(ctx);
  return queued;
}

/**
 * The API's retry: a fresh delivery cycle for a dead letter (queue.ts retryDeadLetter, which refuses
 * anything else with a ConflictError); undefined when the subscription has no such entry.
 */
export async function restartDeadLetter(
  ctx: Pick<AppContext, 'db' | 'wake'>,
  row: SubscriptionRow,
  logId: number,
  actor: Actor,
): Promise<LogRow | undefined> {
  const queued = await ctx.db.kysely
    .transaction()
    .execute((trx) => retryDeadLetter(trx, row.id, logId, actor, row.team_id));
  if (queued) await wakeDeliveryWorkers(ctx);
  return queued;
}

/**
 * Retries a log entry now. A dead letter starts a fresh cycle at attempt 1 (retryDeadLetter, as the
 * API and `svc webhooks retry` do); a failed entry's next attempt, which waits for its backoff, is
 * made due now instead. Anything else, or an entry whose event has moved on, is refused.
 */
export async function retryDelivery(
  ctx: Ctx,
  row: SubscriptionRow,
  logId: number,
  actor: Actor,
): Promise<'restarted' | 'brought-forward'> {
  if (!ctx.config.webhooksEnabled) throw new ConflictError(DISABLED_SERVICE);
  if (row.is_active !== 1) throw new ConflictError('The subscription is inactive; re-enable it before retrying.');
  const outcome = await ctx.db.kysely.transaction().execute(async (trx) => {
    const entry = await trx
      .selectFrom('webhook_deliveries')
      .select(['id', 'event_id', 'event_type', 'status'])
      .where('id', '=', logId)
      .where('subscription_id', '=', row.id)
      .executeTakeFirst();
    if (!entry) throw new NotFoundError('No entry of this delivery log has that id.');
    if (entry.status === 'dead_letter') {
      await retryDeadLetter(trx, row.id, logId, actor, row.team_id);
      return 'restarted' as const;
    }
    if (entry.status !== 'failed')
      throw new ConflictError(`Only a failed or dead_letter entry can be retried; this one is ${entry.status}.`);
    const moved = await trx
      .updateTable('webhook_deliveries')
      .set({ next_retry_at: nowIso() })
      .where('subscription_id', '=', row.id)
      .where('event_id', '=', entry.event_id)
      .where('id', '>', logId)
      .where('status', '=', 'pending')
      .returning('id')
      .executeTakeFirst();
    if (!moved) throw new ConflictError('This event has been attempted again since; retry its newest entry instead.');
    const data = {
      subscription_id: row.id,
      event_id: entry.event_id,
      event_type: entry.event_type,
      retry_id: Number(moved.id),
    };
    await recordAudit(trx, actor, { teamId: row.team_id, action: 'webhook.delivery.retried', targetId: logId, data });
    return 'brought-forward' as const;
  });
  await wakeDeliveryWorkers(ctx);
  return outcome;
}
