// emit(): the one way business code records an event. It writes the event row and every consumer's
// outbox rows (webhooks: one delivery per receiving subscription) inside the caller's transaction,
// so the event exists exactly when the change that caused it is committed. Consumers are given to
// the outbox by whoever builds the app (context.ts); this folder knows none of them.
import type { EventEmitter } from 'node:events';
import { PostgresAdapter, sql, type RawBuilder } from 'kysely';
import { Precompiled, bound } from '../db/precompiled.ts';
import type { Executor } from '../db/schema.ts';
import { newEnvelope, type EventEnvelope } from './envelope.ts';
import type { EventData, EventType } from './registry.ts';

/** An event to record: for one team, or for every active team its user belongs to. */
export type EventInput<T extends EventType = EventType> = { type: T; data: EventData<T> } & (
  { teamId: string } | { userId: number }
);

/** What a consumer's statement can bind: the envelope's fields, `data` as JSON, and the whole body. */
export type BoundEvent = Omit<EventEnvelope, 'data'> & { data: string; payload: string };

/** Binds one field of the event being recorded. */
export type EventField = (name: keyof BoundEvent) => unknown;

/** A JSON list (a column or a value) read as rows with one column, `value`, in the dialect at hand. */
export type JsonRows = (list: RawBuilder<unknown>) => RawBuilder<unknown>;

export interface EventConsumer {
  /** Its outbox rows for one event: an INSERT … SELECT, binding the event through `field`. */
  insert(field: EventField, jsonRows: JsonRows): RawBuilder<unknown>;
  /** PostgreSQL: the channel notified (at commit) when it wrote rows, so idle workers anywhere start at once. */
  channel: string;
  /** SQLite: the ctx.wake event emitted when it wrote rows, for a worker in this process. */
  wake: string;
}

export interface EventOutboxOptions {
  /** Nothing is recorded without a consumer (SERVICE_WEBHOOKS_ENABLED off). */
  consumers: readonly EventConsumer[];
  /** The active teams of a user, for a user-level event (the teams capability knows them). */
  teamsOfUser: (executor: Executor, userId: number) => Promise<string[]>;
  wake: EventEmitter;
}

const field: EventField = (name) => bound<BoundEvent>(name);

const insertEvent = sql`insert into events (id, type, api_version, created_at, team_id, data)
  values (${field('id')}, ${field('type')}, ${field('api_version')}, ${field('created_at')}, ${field('team_id')}, ${field('data')})`;

const postgresRows: JsonRows = (list) => sql`json_array_elements_text(${list}::json) as v(value)`;
const sqliteRows: JsonRows = (list) => sql`json_each(${list})`;

export class EventOutbox {
  readonly #options: EventOutboxOptions;
  /**
   * PostgreSQL: the event and every consumer's rows in one statement (data-modifying CTEs). NOTIFY
   * inside the transaction is delivered at commit, so no worker wakes before the rows exist, and
   * PostgreSQL folds a transaction's identical notifications into one.
   */
  readonly #onPostgres: Precompiled<BoundEvent>;
  /** SQLite has no data-modifying CTE: the event, then each consumer's rows. */
  readonly #onSqlite: Precompiled<BoundEvent>[];

  constructor(options: EventOutboxOptions) {
    this.#options = options;
    const consumers = options.consumers;
    this.#onPostgres = new Precompiled(() => {
      const rows = consumers.map(
        (consumer, i) => sql`, ${sql.ref(`c${i}`)} as (${consumer.insert(field, postgresRows)} returning 1)`,
      );
      const notify = consumers.map(
        (consumer, i) =>
          sql`select pg_notify(${consumer.channel}, '') from (select 1 from ${sql.ref(`c${i}`)} limit 1) as ${sql.ref(`w${i}`)}`,
      );
      return sql`with e as (${insertEvent})${sql.join(rows, sql``)} ${sql.join(notify, sql` union all `)}`;
    });
    this.#onSqlite = [insertEvent, ...consumers.map((consumer) => consumer.insert(field, sqliteRows))].map(
      (statement) => new Precompiled(() => statement),
    );
  }

  /** Records the event for its team (or each active team of its user); returns what it recorded. */
  async emit<T extends EventType>(executor: Executor, event: EventInput<T>): Promise<EventEnvelope[]> {
    if (this.#options.consumers.length === 0) return [];
    const teamIds = 'teamId' in event ? [event.teamId] : await this.#options.teamsOfUser(executor, event.userId);
    const recorded: EventEnvelope[] = [];
    for (const teamId of teamIds) {
      const envelope = newEnvelope(event.type, teamId, event.data);
      await this.#record(executor, envelope);
      recorded.push(envelope);
    }
    return recorded;
  }

  /** One statement on PostgreSQL, one per table on SQLite, whatever the consumers' filters (they run in SQL). */
  async #record(executor: Executor, event: EventEnvelope): Promise<void> {
    const values: BoundEvent = { ...event, data: JSON.stringify(event.data), payload: JSON.stringify(event) };
    if (executor.getExecutor().adapter instanceof PostgresAdapter) {
      await this.#onPostgres.execute(executor, values);
      return;
    }
    const [eventRow, ...consumerRows] = this.#onSqlite;
    await eventRow.execute(executor, values);
    for (const [i, statement] of consumerRows.entries()) {
      const inserted = await statement.execute(executor, values);
      // SQLite has one connection: the woken worker's claim waits for this transaction's commit.
      if (Number(inserted.numAffectedRows ?? 0) > 0) this.#options.wake.emit(this.#options.consumers[i].wake);
    }
  }
}
