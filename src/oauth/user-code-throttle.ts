// Wrong user codes typed at /o/device/: at most 10 in 15 minutes per user and per client address
// (user codes are short, so guessing must stay expensive). Counted in the database so every app
// process sees the same count; rows are few (failures only) and cleaned by deleteExpiredOAuthRows.
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';

export const USER_CODE_FAILURE_LIMIT = 10;
export const USER_CODE_FAILURE_WINDOW_SECONDS = 15 * 60;

export async function userCodeEntryBlocked(
  db: Kysely<Database>,
  userId: number,
  address: string,
  now = Date.now(),
): Promise<boolean> {
  const since = new Date(now - USER_CODE_FAILURE_WINDOW_SECONDS * 1000).toISOString();
  const count = async (column: 'user_id' | 'address', value: number | string) => {
    const row = await db
      .selectFrom('oauth_user_code_failures')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where(column, '=', value)
      .where('created_at', '>', since)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  };
  return (
    (await count('user_id', userId)) >= USER_CODE_FAILURE_LIMIT ||
    (await count('address', address)) >= USER_CODE_FAILURE_LIMIT
  );
}

export async function recordUserCodeFailure(db: Kysely<Database>, userId: number, address: string): Promise<void> {
  await db
    .insertInto('oauth_user_code_failures')
    .values({ user_id: userId, address, created_at: new Date().toISOString() })
    .execute();
}
