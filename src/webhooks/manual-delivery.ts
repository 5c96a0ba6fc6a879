// Deliveries a person asks for: a test event to one subscription, and a retry of a failed or
// dead-letter log entry. Used by the dashboard's webhook page; each writes queue rows that the
// delivery worker sends like any other, signed and logged, and wakes the workers at once.
import type { AppContext } from '../app-context.ts';
import type { Actor } from '../audit/actor.ts';
import { recordAudit } from '../audit/record.ts';
import { nowIso } from '../util/time.ts';
import { wakeDeliveryWorkers } from './wake.ts';
import { EVENT_NAMES, type EventType } from '../events/index.ts';
import { testEnvelope } from '../events/envelope.ts';
import { RetryRefused, retryDeadLetter } from './queue.ts';
import { WebhookError, type SubscriptionRow } from './subscriptions.ts';

type Ctx = Pick<AppContext, 'config' | 'db' | 'wake'>;

const DISABLED_SERVICE = 'Webhooks are disabled on this service (SERVICE_WEBHOOKS_ENABLED).';

/**
 * Queues a real delivery of a test event (`data.test` is true) to this subscription only, of
 * `eventType` or else the first type it receives. Refused (conflict) while webhooks are off or the
 * subscription is inactive; a type it does not receive is invalid.
 */
export async function sendTestEvent(ctx: Ctx, row: SubscriptionRow, eventType?: string): Promise<{ id: number; eventId: string; type: string }> {
  if (!ctx.config.webhooksEnabled) throw new WebhookError('conflict', DISABLED_SERVICE);
  if (row.is_active !== 1) throw new WebhookError('conflict', 'The subscription is inactive.');
  const events = JSON.parse(row.events) as string[];
  const receives: readonly string[] = events[0] === '*' ? EVENT_NAMES : events;
  const type = eventType ?? receives[0];
  if (!receives.includes(type)) throw new WebhookError('invalid', `This subscription does not receive "${type}".`, 'event_type');
  const envelope = testEnvelope(type as EventType, row.team_id);
  const now = envelope.created_at;
  const inserted = await ctx.db.kysely
    .insertInto('webhook_deliveries')
    .values({
      subscription_id: row.id,
      event_id: envelope.id,
      event_type: type,
      payload: JSON.stringify(envelope),
      attempt: 1,
      status: 'pending',
      next_retry_at: now,
      created_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  await wakeDeliveryWorkers(ctx);
  return { id: Number(inserted.id), eventId: envelope.id, type };
}

/**
 * Retries a log entry now. A dead letter starts a fresh cycle at attempt 1 (retryDeadLetter, as the
 * API and `svc webhooks retry` do); a failed entry's next attempt, which waits for its backoff, is
 * made due now instead. Anything else, or an entry whose event has moved on, is refused.
 */
export async function retryDelivery(ctx: Ctx, row: SubscriptionRow, logId: number, actor: Actor): Promise<'restarted' | 'brought-forward'> {
  if (!ctx.config.webhooksEnabled) throw new WebhookError('conflict', DISABLED_SERVICE);
  if (row.is_active !== 1) throw new WebhookError('conflict', 'The subscription is inactive; re-enable it before retrying.');
  const outcome = await ctx.db.kysely.transaction().execute(async (trx) => {
    const entry = await trx
      .selectFrom('webhook_deliveries')
      .select(['id', 'event_id', 'event_type', 'status'])
      .where('id', '=', logId)
      .where('subscription_id', '=', row.id)
      .executeTakeFirst();
    if (!entry) throw new WebhookError('not_found', 'No entry of this delivery log has that id.');
    if (entry.status === 'dead_letter') {
      await retryDeadLetter(trx, row.id, logId, actor, row.team_id);
      return 'restarted' as const;
    }
    if (entry.status !== 'failed') throw new RetryRefused(`Only a failed or dead_letter entry can be retried; this one is ${entry.status}.`);
    const moved = await trx
      .updateTable('webhook_deliveries')
      .set({ next_retry_at: nowIso() })
      .where('subscription_id', '=', row.id)
      .where('event_id', '=', entry.event_id)
      .where('id', '>', logId)
      .where('status', '=', 'pending')
      .returning('id')
      .executeTakeFirst();
    if (!moved) throw new RetryRefused('This event has been attempted again since; retry its newest entry instead.');
    const data = { subscription_id: row.id, event_id: entry.event_id, event_type: entry.event_type, retry_id: Number(moved.id) };
    await recordAudit(trx, actor, { teamId: row.team_id, action: 'webhook.delivery.retried', targetId: logId, data });
    return 'brought-forward' as const;
  });
  await wakeDeliveryWorkers(ctx);
  return outcome;
}
