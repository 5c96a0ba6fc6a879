// PostgreSQL: tells every process of the service about writes other processes made to the tables
// that in-process caches depend on (the PAT resolver's: users, personal_access_tokens). The writer
// publishes with NOTIFY right after the write (WriteWatchPlugin, so every Kysely write of every
// process — API servers, workers, `svc` commands — publishes without the writing code knowing);
// each process that caches keeps one pooled connection LISTENing and drops its caches on a message.
// A message names the writer's schema and table (`schema.table`): services that share one database in
// schemas of their own (or test apps, a schema each) share the channel but not their caches. A message
// without a schema (from a release before the schema was named) is taken as meant for everyone.
// SQLite needs none of this: PRAGMA data_version tells a connection about others' commits.
import type pg from 'pg';

export const WRITE_CHANNEL = 'svc_table_writes';
/** Writes to these tables are published to other processes. */
export const PUBLISHED_TABLES: ReadonlySet<string> = new Set(['users', 'personal_access_tokens']);
/** Bookkeeping columns: an UPDATE that sets only these changes nothing a cache holds. */
const BOOKKEEPING_COLUMNS: ReadonlySet<string> = new Set(['last_used_at', 'last_login_at', 'last_seen_at']);

/** Whether a write may change what a credential cache holds (and so is published). */
export function isPublishedWrite(table: string, columns: readonly string[] | null): boolean {
  if (!PUBLISHED_TABLES.has(table)) return false;
  return columns === null || columns.length === 0 || columns.some((column) => !BOOKKEEPING_COLUMNS.has(column));
}
const RETRY_MS = 1000;

/**
 * Sends the NOTIFYs on a connection of its own, not one from the pool: a writer inside a
 * transaction holds a pooled connection while it waits for its NOTIFY, and ten of them must not
 * wait forever for an eleventh. (A NOTIFY sent for a write inside a transaction can reach other
 * processes before that transaction commits; a lookup racing it there may keep the old row, for at
 * most the cache's TTL.)
 */
export class WritePublisher {
  readonly #connectionString: string;
  readonly #Client: typeof pg.Client;
  #client: Promise<pg.Client> | null = null;
  #closed = false;

  constructor(Client: typeof pg.Client, connectionString: string) {
    this.#Client = Client;
    this.#connectionString = connectionString;
  }

  #connected(): Promise<pg.Client> {
    this.#client ??= (async () => {
      const client = new this.#Client({ connectionString: this.#connectionString });
      client.on('error', () => {
        this.#client = null;
      });
      await client.connect();
      return client;
    })().catch((error) => {
      this.#client = null;
      throw error;
    });
    return this.#client;
  }

  /** Resolves once PostgreSQL has taken the NOTIFY (or it failed: then caches rely on their TTL). */
  async publish(table: string): Promise<void> {
    if (this.#closed) return;
    try {
      // current_schema(): this connection's search_path, as the writer's (same connection string).
      await (
        await this.#connected()
      ).query("select pg_notify($1, current_schema() || '.' || $2)", [WRITE_CHANNEL, table]);
    } catch {
      // The write itself succeeded; other processes see it within their caches' TTL.
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    const client = this.#client;
    this.#client = null;
    if (client) await client.then((c) => c.end()).catch(() => {});
  }
}

/**
 * One LISTEN connection per database handle, opened on first subscription and re-opened after a
 * failure. `live` is false while it is not listening: callers must not trust their caches then.
 */
export class WriteFeed {
  readonly #pool: pg.Pool;
  readonly #listeners = new Set<(table: string) => void>();
  #client: pg.PoolClient | null = null;
  #connecting: Promise<void> | null = null;
  #retry: NodeJS.Timeout | null = null;
  #closed = false;
  live = false;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  subscribe(listener: (table: string) => void) {
    this.#listeners.add(listener);
    this.#connecting ??= this.#connect();
  }

  #emit(table: string) {
    for (const listener of this.#listeners) listener(table);
  }

  async #connect(): Promise<void> {
    if (this.#closed) return;
    let client: pg.PoolClient | null = null;
    try {
      const connection = await this.#pool.connect();
      client = connection;
      const lost = () => {
        if (this.#client !== connection) return;
        this.live = false;
        this.#client = null;
        connection.release(true);
        // Whatever happened while deaf is unknown: everyone forgets.
        this.#emit('*');
        this.#scheduleRetry();
      };
      connection.on('error', lost);
      connection.on('end', lost);
      const { rows } = await connection.query<{ schema: string | null }>('select current_schema() as schema');
      const own = `${rows[0]?.schema ?? ''}.`;
      connection.on('notification', (message) => {
        const payload = message.payload ?? '*';
        if (!payload.includes('.')) this.#emit(payload);
        else if (payload.startsWith(own)) this.#emit(payload.slice(own.length));
      });
      await connection.query(`listen ${WRITE_CHANNEL}`);
      if (this.#closed) {
        connection.release();
        return;
      }
      this.#client = connection;
      this.live = true;
    } catch {
      // A connection that failed before it listened goes back to the pool as broken, not kept.
      if (client && this.#client !== client) client.release(true);
      this.#scheduleRetry();
    }
  }

  #scheduleRetry() {
    if (this.#closed || this.#retry) return;
    this.#retry = setTimeout(() => {
      this.#retry = null;
      this.#connecting = this.#connect();
    }, RETRY_MS).unref();
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.live = false;
    if (this.#retry) clearTimeout(this.#retry);
    await this.#connecting;
    const client = this.#client;
    this.#client = null;
    if (client) {
      await client.query(`unlisten ${WRITE_CHANNEL}`).catch(() => {});
      client.release();
    }
  }
}
