// Single-use keys sent by e-mail: address confirmation (3 days) and password reset (1 hour). The
// link carries 32 random bytes; the table keeps their SHA-256. Using a key marks it used in the same
// UPDATE that checks it (`used_at is null`), so two clicks racing cannot both succeed.
import { createHash, randomBytes } from 'node:crypto';
import type { Executor } from '../db/schema.ts';
import { isoAfter, nowIso } from '../util/time.ts';

export type KeyPurpose = 'confirm_email' | 'password_reset';

export const KEY_TTL_SECONDS: Record<KeyPurpose, number> = { confirm_email: 3 * 86400, password_reset: 3600 };
const KEY_SHAPE = /^[A-Za-z0-9_-]{43}$/;

const hashKey = (key: string) => createHash('sha256').update(key).digest('hex');

/** Creates a key (replacing the user's earlier unused keys of that purpose) and returns the raw key. */
export async function issueKey(db: Executor, purpose: KeyPurpose, userId: number, email: string): Promise<string> {
  const key = randomBytes(32).toString('base64url');
  const now = nowIso();
  await db
    .updateTable('account_keys')
    .set({ used_at: now })
    .where('user_id', '=', userId)
    .where('purpose', '=', purpose)
    .where('used_at', 'is', null)
    .execute();
  await db
    .insertInto('account_keys')
    .values({
      key_hash: hashKey(key),
      purpose,
      user_id: userId,
      email,
      created_at: now,
      expires_at: isoAfter(KEY_TTL_SECONDS[purpose]),
    })
    .execute();
  return key;
}

export interface KeyRecord {
  userId: number;
  email: string;
}

/** The key's user while it is unused and unexpired, without using it (to show the page). */
export async function peekKey(db: Executor, purpose: KeyPurpose, key: string): Promise<KeyRecord | null> {
  if (!KEY_SHAPE.test(key)) return null;
  const row = await db
    .selectFrom('account_keys')
    .select(['user_id', 'email'])
    .where('key_hash', '=', hashKey(key))
    .where('purpose', '=', purpose)
    .where('used_at', 'is', null)
    .where('expires_at', '>', nowIso())
    .executeTakeFirst();
  return row ? { userId: row.user_id, email: row.email } : null;
}

/** Uses the key: true exactly once for a valid key. Call inside the transaction of the change. */
export async function consumeKey(db: Executor, purpose: KeyPurpose, key: string): Promise<KeyRecord | null> {
  const record = await peekKey(db, purpose, key);
  if (!record) return null;
  const result = await db
    .updateTable('account_keys')
    .set({ used_at: nowIso() })
    .where('key_hash', '=', hashKey(key))
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1 ? record : null;
}
