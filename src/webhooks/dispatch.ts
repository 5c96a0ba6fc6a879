// dispatch(): the one way business code emits an outbound event. It writes the event row (and,
// in the webhooks capability, one delivery row per matching subscription) inside the caller's
// transaction, so the event exists exactly when the change that caused it is committed.
import { randomUUID } from 'node:crypto';
import { PostgresAdapter, sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import type { AppContext } from '../app-context.ts';
import type { Database } from '../db/schema.ts';
import { nowIso } from '../util/time.ts';
import { API_VERSION, type EventType } from './events.ts';

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
  await record(ctx, trx, event);
  return event;
}

/** The subscriptions that receive this event: active, of the active team, filtered on type. */
const receivers = (event: EventEnvelope, each: (events: RawBuilder<unknown>) => RawBuilder<unknown>) => sql`
  from webhook_subscriptions s join teams t on t.id = s.team_id
  where s.team_id = ${event.team_id} and s.is_active = 1 and t.is_active = 1
    and exists (select 1 from ${each(sql`s.events`)} where value in ('*', ${event.type}))`;

/**
 * The event row and one pending delivery row per receiving subscription, due now, carrying the
 * exact body every attempt will send. The filter runs in SQL (`events` is a JSON list, `["*"]` or
 * names), so this is one statement on PostgreSQL and two on SQLite, whatever the subscriptions:
 * business transactions pay for their events, and at 1,000 events/s that share of the core counts.
 */
async function record(ctx: Pick<AppContext, 'wake'>, trx: Executor, event: EventEnvelope): Promise<void> {
  const payload = JSON.stringify(event);
  const insertEvent = sql`insert into events (id, type, api_version, created_at, team_id, data)
    values (${event.id}, ${event.type}, ${event.api_version}, ${event.created_at}, ${event.team_id}, ${JSON.stringify(event.data)})`;
  const deliveries = (each: (events: RawBuilder<unknown>) => RawBuilder<unknown>) => sql`insert into webhook_deliveries
      (subscription_id, event_id, event_type, payload, attempt, status, next_retry_at, created_at)
    select s.id, ${event.id}, ${event.type}, ${payload}, 1, 'pending', ${event.created_at}, ${event.created_at}
    ${receivers(event, each)} order by s.id`;
  if (trx.getExecutor().adapter instanceof PostgresAdapter) {
    // NOTIFY inside the transaction is delivered at commit: workers never wake before the rows
    // exist. PostgreSQL folds identical notifications of one transaction into one.
    await sql`with e as (${insertEvent}),
        d as (${deliveries((events) => sql`json_array_elements_text(${events}::json) as v(value)`)} returning 1)
      select pg_notify(${WAKE_CHANNEL}, '') from (select 1 from d limit 1) as any_delivery`.execute(trx);
    return;
  }
  await insertEvent.execute(trx);
  const inserted = await deliveries((events) => sql`json_each(${events})`).execute(trx);
  // SQLite has one connection: the worker's claim waits for this transaction's commit.
  if (Number(inserted.numAffectedRows ?? 0) > 0) ctx.wake.emit('webhooks');
}
