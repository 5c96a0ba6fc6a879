// Records what the service asks of its stores, as the stores receive it: every SQL statement one app
// sends to its database, and every command it sends to Redis. docs/deploy.md ("Capacity") multiplies
// these counts by request and delivery rates; query-counts.test.ts holds the docs to them.
//
// SQL. PostgreSQL: every query any pg client sends whose connection names this app's schema (its
// search_path option): the pool's connections, the LISTEN connections and the NOTIFY publisher's own
// connection, one entry per message. SQLite: every statement through the Kysely executors of this
// app's database handle. Other apps in the same process (test:fast shares processes between files)
// are not recorded, so their background work cannot enter a count.
// Redis: MONITOR on a private redis-server; each take() ends at an ECHO marker sent after the work,
// so a command still in flight is neither missed nor carried into the next count.
import { Redis } from 'ioredis';
import type { CompiledQuery } from 'kysely';
import pg from 'pg';
import type { Db } from '../../src/db/connection.ts';

export interface Sent {
  sql: string;
  parameters: readonly unknown[];
}

/** BEGIN, COMMIT and the like: round trips that do no work of their own. */
const CONTROL = /^\s*(begin|commit|rollback|savepoint|release)\b/i;

/** The statements that do work (not transaction control). */
export const work = (sent: readonly Sent[]) => sent.filter((s) => !CONTROL.test(s.sql));

/** Statements that change rows: INSERT, UPDATE, DELETE (a claim's UPDATE … RETURNING included). */
export const writes = (sent: readonly Sent[]) =>
  work(sent).filter((s) => /\b(insert\s+into|update\s+"?\w+"?(\s+as\s+\w+)?\s+set|delete\s+from)\b/i.test(s.sql));

/** The PAT cache's re-read of the tokens it holds (PostgreSQL, every 0.5 s, 200 tokens a statement). */
export const PAT_REREAD = /inner join "users" as "u" on "u"."id" = "t"."user_id" where "t"."id" in/;
/** The batched write of the tokens' last_used_at (at most once a minute a token, 400 tokens a statement). */
export const PAT_LAST_USED = /^update "personal_access_tokens" set "last_used_at" = case/;

type Recording = { on: boolean; sent: Sent[] };

// PostgreSQL: one patch of pg.Client for the process, recording per schema.
const bySchema = new Map<string, Recording>();
let pgPatched = false;
function patchPg() {
  if (pgPatched) return;
  pgPatched = true;
  const original = pg.Client.prototype.query as (...args: unknown[]) => unknown;
  pg.Client.prototype.query = function (
    this: pg.Client & { connectionParameters?: { options?: string } },
    ...args: unknown[]
  ) {
    const options = this.connectionParameters?.options ?? '';
    const schema = /search_path=(\w+)/.exec(options)?.[1];
    const recording = schema ? bySchema.get(schema) : undefined;
    if (recording?.on) {
      const [first, values] = args as [string | { text?: string; values?: unknown[] }, unknown[] | undefined];
      if (typeof first === 'string') recording.sent.push({ sql: first, parameters: values ?? [] });
      else if (first?.text !== undefined) recording.sent.push({ sql: first.text, parameters: first.values ?? [] });
    }
    return original.apply(this, args);
  } as typeof pg.Client.prototype.query;
}

// SQLite: one patch of Kysely's executor, recording per adapter (one per database handle, shared
// by its transactions' executors).
const byAdapter = new Map<object, Recording>();
let kyselyPatched = false;
type Executor = { adapter: object; executeQuery(query: CompiledQuery, ...rest: unknown[]): Promise<unknown> };
function patchKysely(db: Db) {
  if (kyselyPatched) return;
  kyselyPatched = true;
  // executeQuery lives on a base class Kysely does not export: found by walking up.
  let proto = Object.getPrototypeOf(db.kysely.getExecutor());
  while (proto && !Object.hasOwn(proto, 'executeQuery')) proto = Object.getPrototypeOf(proto);
  const original = proto.executeQuery as Executor['executeQuery'];
  proto.executeQuery = function (this: Executor, query: CompiledQuery, ...rest: unknown[]) {
    const recording = byAdapter.get(this.adapter);
    if (recording?.on) recording.sent.push({ sql: query.sql, parameters: query.parameters });
    return original.call(this, query, ...rest);
  };
}

/** Records every statement the app on `db` (opened from `databaseUrl`) sends; `take()` returns and clears them. */
export function sqlRecorder(db: Db, databaseUrl: string) {
  const recording: Recording = { on: true, sent: [] };
  if (db.dialect === 'postgres') {
    const schema = /search_path(?:%3D|=)(\w+)/.exec(databaseUrl)?.[1];
    if (!schema) throw new Error(`no search_path in ${databaseUrl}: the recorder tells apps apart by schema`);
    patchPg();
    bySchema.set(schema, recording);
  } else {
    patchKysely(db);
    byAdapter.set(db.kysely.getExecutor().adapter, recording);
  }
  return {
    take(): Sent[] {
      const taken = recording.sent;
      recording.sent = [];
      return taken;
    },
    stop() {
      recording.on = false;
    },
  };
}

/** Every command the app sends to the Redis at `url` (MONITOR: only the app and this recorder may use it). */
export async function redisRecorder(url: string) {
  const marker = new Redis(url);
  await marker.ping();
  const monitorClient = new Redis(url);
  const monitor = await monitorClient.monitor();
  let seen: string[][] = [];
  let waiting: { text: string; arrived: () => void } | null = null;
  let markers = 0;
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    // The commands a script runs inside Redis are Redis's work, not round trips: the script counts once.
    if (source === 'lua') return;
    if (args[0]?.toLowerCase() === 'echo' && args[1] === waiting?.text) return waiting.arrived();
    seen.push([args[0].toLowerCase(), ...args.slice(1)]);
  });
  return {
    /** The commands (name first, lower-cased) the app sent since the last take(). */
    async take(): Promise<string[][]> {
      const text = `store-recorders-mark-${++markers}`;
      const arrived = new Promise<void>((resolve) => (waiting = { text, arrived: resolve }));
      await marker.echo(text);
      await arrived;
      waiting = null;
      const taken = seen;
      seen = [];
      return taken;
    },
    close() {
      monitor.disconnect();
      monitorClient.disconnect();
      marker.disconnect();
    },
  };
}
