// A statement written once with Kysely's `sql` template, compiled by the first executor that runs
// it, then run with each call's values bound where the compiler placed their markers. Building,
// freezing and visiting a query's operation tree (and the write watch reading its text) is a large
// share of what a small INSERT costs, and a burst of events pays it per event. Only compiled text
// runs here, so no Kysely plugin sees these statements: use it only for tables the write watch
// (write-watch.ts: UPDATE and DELETE of users and tokens) has no interest in.
import { CompiledQuery, type QueryResult, type RawBuilder } from 'kysely';
import type { Executor } from './schema.ts';

const BOUND = Symbol('bound');
interface Marker {
  readonly [BOUND]: string;
}

/** Marks where a statement binds the value named `name` of the values `execute` is given. */
export const bound = <Values>(name: keyof Values & string): Marker => ({ [BOUND]: name });

const isMarker = (value: unknown): value is Marker => typeof value === 'object' && value !== null && BOUND in value;

export class Precompiled<Values extends Record<string, unknown>> {
  readonly #build: () => RawBuilder<unknown>;
  /** The compiled text, and per parameter either the name of the value it binds or a constant. */
  #compiled: { sql: string; parameters: Array<{ name: keyof Values } | { constant: unknown }> } | null = null;

  /** `build` makes the statement in the executor's dialect; it runs once, on first use. */
  constructor(build: () => RawBuilder<unknown>) {
    this.#build = build;
  }

  execute(executor: Executor, values: Values): Promise<QueryResult<unknown>> {
    if (!this.#compiled) {
      const query = this.#build().compile(executor);
      const parameters = query.parameters.map((p) =>
        isMarker(p) ? { name: p[BOUND] as keyof Values } : { constant: p },
      );
      this.#compiled = { sql: query.sql, parameters };
    }
    const { sql, parameters } = this.#compiled;
    return executor.executeQuery(
      CompiledQuery.raw(
        sql,
        parameters.map((p) => ('name' in p ? values[p.name] : p.constant)),
      ),
    );
  }
}
