// Personal access tokens: creation (raw token returned once), listing, revocation. The API's bearer
// resolver for them, with its cache, is pat-resolver.ts.
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import { nowIso } from '../util/time.ts';
import { DISPLAY_PREFIX_LENGTH, generatePat, hashPat } from './pat-format.ts';

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
