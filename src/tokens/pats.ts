// Personal access tokens: creation (raw token returned once), listing, revocation, and the
// bearer resolver used by the API on every request.
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import type { BearerResolver, Principal } from '../http/auth.ts';
import { toAuthUser } from '../accounts/users.ts';
import { nowIso } from '../util/time.ts';
import { DISPLAY_PREFIX_LENGTH, PAT_PREFIX, generatePat, hashPat, isWellFormedPat } from './pat-format.ts';

export interface NewPat {
  userId: number;
  name: string;
  scopes: string[];
  expiresAt: string | null;
}

export interface PatRecord {
  id: number;
  name: string;
  prefix: string;
  scopes: string[];
  created_at: string;
  last_used_at: string | null;
  expires_at: string | null;
  revoked_at: string | null;
}

export async function createPat(db: Kysely<Database>, input: NewPat): Promise<{ id: number; token: string }> {
  const token = generatePat();
  const row = await db
    .insertInto('personal_access_tokens')
    .values({
      user_id: input.userId,
      name: input.name,
      token_hash: hashPat(token),
      token_prefix: token.slice(0, DISPLAY_PREFIX_LENGTH),
      scopes: JSON.stringify(input.scopes),
      expires_at: input.expiresAt,
      created_at: nowIso(),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { id: row.id, token };
}

export async function listPats(db: Kysely<Database>, userId: number): Promise<PatRecord[]> {
  const rows = await db
    .selectFrom('personal_access_tokens')
    .select(['id', 'name', 'token_prefix', 'scopes', 'created_at', 'last_used_at', 'expires_at', 'revoked_at'])
    .where('user_id', '=', userId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
  // Keys in PatRecord order (`id` first): `svc token list --json` prints them as they come.
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    prefix: row.token_prefix,
    scopes: JSON.parse(row.scopes),
    created_at: row.created_at,
    last_used_at: row.last_used_at,
    expires_at: row.expires_at,
    revoked_at: row.revoked_at,
  }));
}

/** Revokes a token; with userId, only one of that user's. Returns false when nothing was revoked. */
export async function revokePat(db: Kysely<Database>, id: number, userId?: number): Promise<boolean> {
  let query = db
    .updateTable('personal_access_tokens')
    .set({ revoked_at: nowIso() })
    .where('id', '=', id)
    .where('revoked_at', 'is', null);
  if (userId !== undefined) query = query.where('user_id', '=', userId);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

// last_used_at is written at most once a minute per token: the SQL condition makes that true
// across processes, and the in-process map spares the UPDATE on the hot path in between.
const LAST_USED_GRANULARITY_MS = 60_000;

export class PatResolver implements BearerResolver {
  readonly #db: Kysely<Database>;
  readonly #emptyScopesFullAccess: boolean;
  readonly #lastUsedWrites = new Map<number, number>();

  constructor(db: Kysely<Database>, emptyScopesFullAccess: boolean) {
    this.#db = db;
    this.#emptyScopesFullAccess = emptyScopesFullAccess;
  }

  matches(token: string): boolean {
    return token.startsWith(PAT_PREFIX);
  }

  async resolve(token: string): Promise<Principal | null> {
    if (!isWellFormedPat(token)) return null;
    // One joined query for token and user: the hot path of every PAT request.
    const row = await this.#db
      .selectFrom('personal_access_tokens as t')
      .innerJoin('users as u', 'u.id', 't.user_id')
      .select([
        't.id as token_id',
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
      ])
      .where('t.token_hash', '=', hashPat(token))
      .executeTakeFirst();
    if (!row || row.revoked_at !== null || row.is_active !== 1) return null;
    const now = Date.now();
    if (row.expires_at !== null && Date.parse(row.expires_at) <= now) return null;
    this.#touch(row.token_id, row.last_used_at, now);
    const scopes: string[] = JSON.parse(row.scopes);
    const fullAccess = scopes.length === 0 && this.#emptyScopesFullAccess;
    return {
      user: toAuthUser(row),
      kind: 'pat',
      scopes: fullAccess ? null : new Set(scopes),
      credentialId: `pat:${row.token_id}`,
    };
  }

  #touch(tokenId: number, lastUsedAt: string | null, now: number) {
    const lastWrite = Math.max(this.#lastUsedWrites.get(tokenId) ?? 0, lastUsedAt ? Date.parse(lastUsedAt) : 0);
    if (now - lastWrite < LAST_USED_GRANULARITY_MS) return;
    this.#lastUsedWrites.set(tokenId, now);
    const threshold = new Date(now - LAST_USED_GRANULARITY_MS).toISOString();
    // Not awaited: the request does not wait for bookkeeping; a failure only loses a timestamp.
    this.#db
      .updateTable('personal_access_tokens')
      .set({ last_used_at: new Date(now).toISOString() })
      .where('id', '=', tokenId)
      .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', threshold)]))
      .execute()
      .catch(() => this.#lastUsedWrites.delete(tokenId));
  }
}
