// dispatch(): the one way business code emits an outbound event. It writes the event row (and,
// in the webhooks capability, one delivery row per matching subscription) inside the caller's
// transaction, so the event exists exactly when the change that caused it is committed.
import { randomUUID } from 'node:crypto';
import { PostgresAdapter, sql, type Kysely, type Transaction } from 'kysely';
import type { AppContext } from '../app-context.ts';
import type { Database } from '../db/schema.ts';
import { nowIso } from '../util/time.ts';
import { API_VERSION, type EventType } from './events.ts';
import { subscribesTo } from './subscriptions.ts';

/** PostgreSQL channel a dispatch notifies (delivered at commit) so idle workers start at once. */
export const WAKE_CHANNEL = 'svc_webhooks';

export type Executor = Kysely<Database> | Transaction<Database>;

export interface EventEnvelope {
  id: string;
  type: EventType;
  api_version: string;
  created_at: string;
  team_id: string;
  data: Record<string, unknown>;
}

/**
 * Records an event for a team. Does nothing (returns null) when SERVICE_WEBHOOKS_ENABLED is off.
 * `data` holds only stable identifiers and UTC timestamps; the envelope fields are added here.
 */
export async function dispatch(
  ctx: Pick<AppContext, 'config' | 'wake'>,
  trx: Executor,
  teamId: string,
  type: EventType,
  data: Record<string, unknown>,
): Promise<EventEnvelope | null> {
  if (!ctx.config.webhooksEnabled) return null;
  const event: EventEnvelope = {
    id: `evt_${randomUUID()}`,
    type,
    api_version: API_VERSION,
    created_at: nowIso(),
    team_id: teamId,
    data,
  };
  await trx
    .insertInto('events')
    .values({ ...event, data: JSON.stringify(data) })
    .execute();
  await enqueueDeliveries(ctx, trx, event);
  return event;
}

const notified = new WeakSet<object>();

/**
 * One pending delivery row per active subscription of the (active) team that receives this type,
 * due now, carrying the exact body every attempt will send.
 */
async function enqueueDeliveries(ctx: Pick<AppContext, 'wake'>, trx: Executor, event: EventEnvelope): Promise<void> {
  const subscriptions = await trx
    .selectFrom('webhook_subscriptions as s')
    .innerJoin('teams as t', 't.id', 's.team_id')
    .select(['s.id', 's.events'])
    .where('s.team_id', '=', event.team_id)
    .where('s.is_active', '=', 1)
    .where('t.is_active', '=', 1)
    .execute();
  const receivers = subscriptions.filter((s) => subscribesTo(s.events, event.type));
  if (receivers.length === 0) return;
  const payload = JSON.stringify(event);
  const now = nowIso();
  await trx
    .insertInto('webhook_deliveries')
    .values(
      receivers.map((s) => ({
        subscription_id: s.id,
        event_id: event.id,
        event_type: event.type,
        payload,
        attempt: 1,
        status: 'pending' as const,
        next_retry_at: now,
        created_at: now,
      })),
    )
    .execute();
  if (trx.getExecutor().adapter instanceof PostgresAdapter) {
    // NOTIFY inside the transaction is delivered at commit: workers never wake before the rows exist.
    // Once per transaction is enough (PostgreSQL folds identical notifications anyway).
    if (notified.has(trx)) return;
    notified.add(trx);
    await sql`select pg_notify(${WAKE_CHANNEL}, '')`.execute(trx);
  } else {
    // SQLite has one connection: the worker's claim waits for this transaction's commit.
    ctx.wake.emit('webhooks');
  }
}
