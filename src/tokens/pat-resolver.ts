// The API's bearer resolver for personal access tokens, used on every request: a cache of what the
// database said about each token (kept exact by write-watch, the credential count or the write
// feed), so that a cached token authenticates synchronously, with no query and no promise.
import type { Kysely } from 'kysely';
import type { Database, Row } from '../db/schema.ts';
import type { BearerResolver } from '../http/auth.ts';
import { bearerIdentity, type AuthenticatedIdentity } from '../http/identity.ts';
import { externalChanges } from '../db/connection.ts';
import { isPublishedWrite } from '../db/write-feed.ts';
import { onTableWrite } from '../db/write-watch.ts';
import { toAuthUser } from '../accounts/users.ts';
import { LastUsedWriter } from './last-used.ts';
import { PAT_PREFIX, hasPatShape, hasValidChecksum, hashPat } from './pat-format.ts';

/**
 * PostgreSQL: how old the database state behind a cached token may be when it is used. Within this process
 * any write to `users` or `personal_access_tokens` (revocation, deactivation, profile change — by a
 * request or a CLI command) empties the cache at once (db/write-watch.ts). Other processes' commits:
 * on SQLite, the count that triggers keep of changes to those rows (migration 0017), read when
 * PRAGMA data_version says another connection committed (checked once per event-loop turn); on
 * PostgreSQL, every process publishes such writes with NOTIFY before the write returns, and this
 * one LISTENs (db/write-feed.ts); while it is not listening the cache is not used. So the TTL only
 * bounds writes nothing announces (raw SQL from outside the service on PostgreSQL): they take effect
 * here within this long. SQLite needs no TTL: the triggers count every writer's changes.
 */
export const PAT_CACHE_TTL_MS = 1_000;
/**
 * PostgreSQL: cached tokens are re-read every half TTL, a few hundred per query (between queries the
 * event loop serves requests), so a busy token never expires and the database sees a few queries per
 * interval instead of one per token per TTL.
 */
const REVALIDATE_EVERY_MS = PAT_CACHE_TTL_MS / 2;
/** A token not presented for this long is dropped at the next revalidation instead of re-read. */
const IDLE_EVICT_MS = 30_000;
/** Bounded: beyond it the oldest entry goes. */
const PAT_CACHE_MAX_ENTRIES = 10_000;
const REVALIDATE_CHUNK = 200;

/** What the resolver reads per token: the token and its user, in one joined row. */
type PatRow = { token_id: number } & Pick<
  Row<'personal_access_tokens'>,
  'token_hash' | 'scopes' | 'expires_at' | 'revoked_at' | 'last_used_at'
> &
  Pick<Row<'users'>, 'id' | 'email' | 'first_name' | 'last_name' | 'display_name' | 'is_staff' | 'is_active'>;

interface CachedPat {
  /** The row's raw values, to tell an unchanged row at revalidation without rebuilding the entry. */
  scopesJson: string;
  expiresAtRaw: string | null;
  /** When the query that produced this entry started: the state is at least this recent. */
  fetchedAt: number;
  usedAt: number;
  tokenId: number;
  /** The row's last_used_at in ms since the epoch (0 when never used): read on every request. */
  lastUsedMs: number;
  /** ms since the epoch, or Infinity */
  expiresAt: number;
  /** What every request with this token is: one frozen object, so a cached token allocates none. */
  identity: AuthenticatedIdentity;
}

export class PatResolver implements BearerResolver {
  readonly #db: Kysely<Database>;
  readonly #emptyScopesFullAccess: boolean;
  /** last_used_at: at most once a minute per token, written in batches (last-used.ts). */
  readonly #lastUsed: LastUsedWriter;
  /** token hash → what the database said about it, at most PAT_CACHE_TTL_MS ago. */
  readonly #cache = new Map<string, CachedPat>();
  /** Bumped on every invalidation: a lookup that raced one does not fill the cache. */
  #generation = 0;
  /** SQLite: the credential count (re-read only when data_version moved). */
  readonly #externalCounter: (() => number) | null = null;
  /** PostgreSQL: whether the write feed is listening (the cache is bypassed while it is not). */
  readonly #feedLive: (() => boolean) | null = null;
  #externalSeen = -1;
  #externalCheckedThisTurn = false;
  readonly #nextTurn = () => {
    this.#externalCheckedThisTurn = false;
  };
  #revalidation: NodeJS.Timeout | null = null;

  constructor(db: Kysely<Database>, emptyScopesFullAccess: boolean) {
    this.#db = db;
    this.#emptyScopesFullAccess = emptyScopesFullAccess;
    this.#lastUsed = new LastUsedWriter(db);
    const external = externalChanges(db);
    if (external?.kind === 'counter') this.#externalCounter = external.counter;
    if (external?.kind === 'feed') {
      this.#feedLive = external.live;
      external.subscribe(() => this.invalidate());
    }
    // The listener lives as long as the process (one resolver per app); it only clears a Map. Our
    // own last_used_at bookkeeping changes nothing an identity carries (isPublishedWrite).
    onTableWrite((table, columns) => {
      if (isPublishedWrite(table, columns)) this.invalidate();
    });
  }

  /** Forgets every resolved token (a credential or user may have changed). */
  invalidate() {
    this.#generation++;
    this.#cache.clear();
  }

  matches(token: string): boolean {
    return token.startsWith(PAT_PREFIX);
  }

  /** Synchronous when the token is cached (the hot path: no promise), a promise when it is read. */
  resolve(token: string): AuthenticatedIdentity | null | Promise<AuthenticatedIdentity | null> {
    if (!hasPatShape(token)) return null;
    const hash = hashPat(token);
    const now = Date.now();
    // Once per turn of the event loop: every request resolved in this turn was read from its socket
    // after the current I/O poll returned, so a commit that finished before such a request was sent
    // also finished before this check. (The PRAGMA takes a WAL read lock: per request it would be
    // a noticeable share of the hot path.)
    if (this.#externalCounter && !this.#externalCheckedThisTurn) {
      this.#externalCheckedThisTurn = true;
      setImmediate(this.#nextTurn);
      const version = this.#externalCounter();
      if (version !== this.#externalSeen) {
        this.#externalSeen = version;
        this.invalidate();
      }
    }
    let entry = this.#cache.get(hash);
    if (
      entry &&
      this.#externalCounter === null &&
      (now - entry.fetchedAt >= PAT_CACHE_TTL_MS || (this.#feedLive !== null && !this.#feedLive()))
    ) {
      this.#cache.delete(hash);
      entry = undefined;
    }
    // The checksum is checked before a database lookup only: a cached entry was loaded for this
    // very hash, after its token passed the checksum.
    if (entry) return this.#identity(entry, now);
    if (!hasValidChecksum(token)) return null;
    return this.#load(hash, now).then((loaded) => (loaded ? this.#identity(loaded, now) : null));
  }

  #identity(entry: CachedPat, now: number): AuthenticatedIdentity | null {
    if (entry.expiresAt <= now) return null;
    entry.usedAt = now;
    this.#lastUsed.touch(entry.tokenId, entry.lastUsedMs, now);
    return entry.identity;
  }

  // Every column read here but last_used_at must be one that migration 0017's SQLite triggers count
  // changes of (test/db/credential-changes.test.ts compares them).
  #query() {
    return this.#db
      .selectFrom('personal_access_tokens as t')
      .innerJoin('users as u', 'u.id', 't.user_id')
      .select([
        't.id as token_id',
        't.token_hash',
        't.scopes',
        't.expires_at',
        't.revoked_at',
        't.last_used_at',
        'u.id',
        'u.email',
        'u.first_name',
        'u.last_name',
        'u.display_name',
        'u.is_staff',
        'u.is_active',
      ]);
  }

  /** The cache entry for a row, or null when the row says the token must be refused. */
  #entryFrom(row: PatRow, fetchedAt: number, usedAt: number): CachedPat | null {
    // Refusals are not cached: a token that is not valid now may not be remembered as valid later,
    // and guessing is the throttle's business.
    if (row.revoked_at !== null || row.is_active !== 1) return null;
    const scopes: string[] = JSON.parse(row.scopes);
    const fullAccess = scopes.length === 0 && this.#emptyScopesFullAccess;
    return {
      scopesJson: row.scopes,
      expiresAtRaw: row.expires_at,
      fetchedAt,
      usedAt,
      tokenId: row.token_id,
      lastUsedMs: row.last_used_at === null ? 0 : Date.parse(row.last_used_at),
      expiresAt: row.expires_at === null ? Infinity : Date.parse(row.expires_at),
      // Shared by every request this entry serves: frozen so that no route can alter another's.
      identity: Object.freeze(
        bearerIdentity(
          'pat',
          Object.freeze(toAuthUser(row)),
          `pat:${row.token_id}`,
          fullAccess ? null : new Set(scopes),
        ),
      ),
    };
  }

  async #load(hash: string, now: number): Promise<CachedPat | null> {
    const generation = this.#generation;
    // One joined query for token and user: the hot path of every PAT request not in the cache.
    const row = await this.#query().where('t.token_hash', '=', hash).executeTakeFirst();
    const entry = row ? this.#entryFrom(row, now, now) : null;
    if (entry && generation === this.#generation && (this.#feedLive === null || this.#feedLive())) {
      if (this.#cache.size >= PAT_CACHE_MAX_ENTRIES) this.#cache.delete(this.#cache.keys().next().value as string);
      this.#cache.set(hash, entry);
      if (this.#externalCounter === null)
        this.#revalidation ??= setTimeout(() => void this.#revalidate(), REVALIDATE_EVERY_MS).unref();
    }
    return entry;
  }

  /** Re-reads every cached token, a chunk per query; drops idle, revoked, deactivated and deleted ones. */
  async #revalidate() {
    const now = Date.now();
    const wanted: [number, string][] = [];
    for (const [hash, entry] of this.#cache) {
      if (now - entry.usedAt > IDLE_EVICT_MS) this.#cache.delete(hash);
      else wanted.push([entry.tokenId, hash]);
    }
    try {
      for (let i = 0; i < wanted.length; i += REVALIDATE_CHUNK) {
        const chunk = wanted.slice(i, i + REVALIDATE_CHUNK);
        const started = Date.now();
        const generation = this.#generation;
        const rows = await this.#query()
          .where(
            't.id',
            'in',
            chunk.map(([id]) => id),
          )
          .execute();
        if (generation !== this.#generation) continue;
        const seen = new Set<string>();
        for (const row of rows) {
          const current = this.#cache.get(row.token_hash);
          if (!current) continue;
          seen.add(row.token_hash);
          if (sameRow(current, row)) {
            current.fetchedAt = started;
            continue;
          }
          const entry = this.#entryFrom(row, started, current.usedAt);
          if (entry) this.#cache.set(row.token_hash, entry);
          else this.#cache.delete(row.token_hash);
        }
        // Gone from the database (deleted token or user): gone from the cache.
        for (const [, hash] of chunk) if (!seen.has(hash)) this.#cache.delete(hash);
      }
    } catch {
      // The database is unreachable or closed (app stopped): forget everything, which also ends
      // this timer chain; the next request reads the database again and meets the error itself.
      this.#cache.clear();
    }
    this.#revalidation =
      this.#cache.size > 0 ? setTimeout(() => void this.#revalidate(), REVALIDATE_EVERY_MS).unref() : null;
  }

  /** Writes the uses still waiting for their batch: called when the app closes, before the database does. */
  close(): Promise<void> {
    return this.#lastUsed.flush();
  }
}

/** True when the row still says what the entry holds (the entry can be kept as it is). */
function sameRow(entry: CachedPat, row: PatRow): boolean {
  const user = entry.identity.user;
  return (
    row.revoked_at === null &&
    row.is_active === 1 &&
    row.scopes === entry.scopesJson &&
    row.expires_at === entry.expiresAtRaw &&
    row.email === user.email &&
    row.first_name === user.first_name &&
    row.last_name === user.last_name &&
    row.display_name === user.display_name &&
    row.is_staff === (user.is_staff ? 1 : 0)
  );
}
