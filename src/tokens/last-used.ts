// A token's last_used_at, written in batches. The resolver records a use here at most once a minute
// per token; the uses recorded during one interval are written together, in one UPDATE per 400
// tokens, when the interval ends.
//
// Why not one UPDATE per use: every token a client keeps using comes due once a minute, and tokens
// first used together (a fleet of CI jobs, a deploy) stay due together. On SQLite each write would
// be its own commit on the event loop, so a thousand such tokens would hold the core for a burst once
// a minute, and the requests of that moment would wait behind it. One statement for all of them is
// a small fraction of that.
// The price: last_used_at shows a use up to FLUSH_EVERY_MS late, and a process that dies without
// closing its app loses at most that interval's timestamps (bookkeeping, not a credential).
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';

/** A token's last_used_at is written at most once per this long (in this process, and across processes). */
const LAST_USED_GRANULARITY_MS = 60_000;
/** How long a recorded use waits for others to share its UPDATE. */
export const FLUSH_EVERY_MS = 1_000;
/** Tokens per UPDATE: two parameters each, far below SQLite's and PostgreSQL's limits. */
const PER_STATEMENT = 400;

export class LastUsedWriter {
  readonly #db: Kysely<Database>;
  /** token id → when this process last recorded a use (written, or waiting to be). */
  readonly #recorded = new Map<number, number>();
  /** token id → the use to write at the next flush. */
  #pending = new Map<number, number>();
  #timer: NodeJS.Timeout | null = null;
  readonly #flushNow = () => {
    this.#timer = null;
    void this.flush();
  };

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /**
   * A use of the token at `now`; `storedMs` is its last_used_at as last read from the database (0
   * when never used). Cheap when the token was recorded less than a minute ago: the hot path.
   */
  touch(tokenId: number, storedMs: number, now: number): void {
    const last = Math.max(this.#recorded.get(tokenId) ?? 0, storedMs);
    if (now - last < LAST_USED_GRANULARITY_MS) return;
    this.#recorded.set(tokenId, now);
    this.#pending.set(tokenId, now);
    this.#timer ??= setTimeout(this.#flushNow, FLUSH_EVERY_MS).unref();
  }

  /** Writes every recorded use now (the app's close calls this before the database closes). */
  async flush(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    const uses = [...this.#pending];
    this.#pending = new Map();
    for (let i = 0; i < uses.length; i += PER_STATEMENT) {
      const chunk = uses.slice(i, i + PER_STATEMENT);
      try {
        await this.#write(chunk);
      } catch {
        // Only timestamps are lost; forgetting the record lets the token's next use try again.
        for (const [tokenId] of chunk) this.#recorded.delete(tokenId);
      }
    }
  }

  #write(uses: [number, number][]) {
    const cases = sql.join(
      uses.map(([tokenId, at]) => sql`when ${tokenId} then ${new Date(at).toISOString()}`),
      sql` `,
    );
    // Another process may have written the token in the last minute: then this one does not. (The
    // bound is taken at the flush, so it is at most FLUSH_EVERY_MS looser than at the use.)
    const threshold = new Date(Date.now() - LAST_USED_GRANULARITY_MS).toISOString();
    return this.#db
      .updateTable('personal_access_tokens')
      .set({ last_used_at: sql<string>`case id ${cases} end` })
      .where(
        'id',
        'in',
        uses.map(([tokenId]) => tokenId),
      )
      .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', threshold)]))
      .execute();
  }
}
