// dispatch(): the one way business code emits an outbound event. It writes the event row (and,
// in the webhooks capability, one delivery row per matching subscription) inside the caller's
// transaction, so the event exists exactly when the change that caused it is committed.
import { randomUUID } from 'node:crypto';
import { CompiledQuery, PostgresAdapter, sql, type Kysely, type QueryResult, type RawBuilder, type Transaction } from 'kysely';
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

/** What the statements below bind, by name: the envelope's fields, `data` as JSON, and the whole body. */
type Bound = Omit<EventEnvelope, 'data'> & { data: string; payload: string };

const BOUND = Symbol('bound');
type Marker = { [BOUND]: keyof Bound };
const bound = (name: keyof Bound): Marker => ({ [BOUND]: name });

/**
 * A statement written once with the query builder's `sql` template, compiled on first use, and then
 * run with each call's values bound where the compiler placed their markers. Why not build it per
 * call: building, freezing and visiting the operation tree, and the write watch reading the raw
 * text, are a large share of SQLite's dispatch, which a burst of events pays per event
 * (docs/performance.md, 10,000-event burst). Only compiled text runs here, so no plugin
 * sees these statements: they insert into `events` and `webhook_deliveries`, which the write watch
 * (db/write-watch.ts: UPDATE and DELETE of users and tokens) has no interest in.
 */
class Precompiled {
  readonly #build: () => RawBuilder<unknown>;
  /** The compiled text, and per parameter either the name of the value it binds or a constant. */
  #compiled: { sql: string; parameters: Array<{ name: keyof Bound } | { constant: unknown }> } | null = null;

  /** `build` makes the statement in one dialect's SQL; the first executor's compiler compiles it. */
  constructor(build: () => RawBuilder<unknown>) {
    this.#build = build;
  }

  execute(trx: Executor, values: Bound): Promise<QueryResult<unknown>> {
    if (!this.#compiled) {
      const query = this.#build().compile(trx);
      const parameters = query.parameters.map((p) => (typeof p === 'object' && p !== null && BOUND in p ? { name: (p as Marker)[BOUND] } : { constant: p }));
      this.#compiled = { sql: query.sql, parameters };
    }
    const { sql: text, parameters } = this.#compiled;
    return trx.executeQuery(CompiledQuery.raw(text, parameters.map((p) => ('name' in p ? values[p.name] : p.constant))));
  }
}

const insertEvent = sql`insert into events (id, type, api_version, created_at, team_id, data)
  values (${bound('id')}, ${bound('type')}, ${bound('api_version')}, ${bound('created_at')}, ${bound('team_id')}, ${bound('data')})`;

/**
 * One pending delivery row per receiving subscription (active, of the active team, filtered on
 * type), due now, carrying the exact body every attempt will send. `events` is a JSON list, `["*"]`
 * or names; `each` is the dialect's way to read it as rows.
 */
const insertDeliveries = (each: (events: RawBuilder<unknown>) => RawBuilder<unknown>) => sql`insert into webhook_deliveries
    (subscription_id, event_id, event_type, payload, attempt, status, next_retry_at, created_at)
  select s.id, ${bound('id')}, ${bound('type')}, ${bound('payload')}, 1, 'pending', ${bound('created_at')}, ${bound('created_at')}
  from webhook_subscriptions s join teams t on t.id = s.team_id
  where s.team_id = ${bound('team_id')} and s.is_active = 1 and t.is_active = 1
    and exists (select 1 from ${each(sql`s.events`)} where value in ('*', ${bound('type')}))
  order by s.id`;

/**
 * PostgreSQL: the event and its deliveries in one statement. NOTIFY inside the transaction is
 * delivered at commit, so workers never wake before the rows exist; PostgreSQL folds identical
 * notifications of one transaction into one.
 */
const recordOnPostgres = new Precompiled(
  () => sql`with e as (${insertEvent}),
      d as (${insertDeliveries((events) => sql`json_array_elements_text(${events}::json) as v(value)`)} returning 1)
    select pg_notify(${WAKE_CHANNEL}, '') from (select 1 from d limit 1) as any_delivery`,
);
/** SQLite has no data-modifying CTE: two statements. */
const insertEventOnSqlite = new Precompiled(() => insertEvent);
const insertDeliveriesOnSqlite = new Precompiled(() => insertDeliveries((events) => sql`json_each(${events})`));

/**
 * The event row and its delivery rows: one statement on PostgreSQL and two on SQLite, whatever the
 * subscriptions (the filter runs in SQL). Business transactions pay for their events, and at 1,000
 * events/s that share of the core counts.
 */
async function record(ctx: Pick<AppContext, 'wake'>, trx: Executor, event: EventEnvelope): Promise<void> {
  const values: Bound = { ...event, data: JSON.stringify(event.data), payload: JSON.stringify(event) };
  if (trx.getExecutor().adapter instanceof PostgresAdapter) {
    await recordOnPostgres.execute(trx, values);
    return;
  }
  await insertEventOnSqlite.execute(trx, values);
  const inserted = await insertDeliveriesOnSqlite.execute(trx, values);
  // SQLite has one connection: the worker's claim waits for this transaction's commit.
  if (Number(inserted.numAffectedRows ?? 0) > 0) ctx.wake.emit('webhooks');
}
