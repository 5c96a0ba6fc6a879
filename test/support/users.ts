// Test users written straight into the table. Every one has TEST_PASSWORD, whose argon2id hash is made
// once per process and shared: one hash costs ~30 ms of CPU, and the suite creates hundreds of users
// that exist only to hold a token, join a team or log in. The hash is the real thing (logins verify it
// with the service's own code); tests of sign-up and of hashing itself go through the API or
// src/accounts/passwords.ts instead.
import { normaliseEmail } from '../../src/accounts/email.ts';
import { hashPassword } from '../../src/accounts/passwords.ts';
import type { Executor, NewRow } from '../../src/db/schema.ts';

export const TEST_PASSWORD = 'correct horse battery staple';

let testHash: Promise<string> | undefined;
/** TEST_PASSWORD's argon2id hash, made on first use and shared by every test user of the process. */
export function testPasswordHash(): Promise<string> {
  testHash ??= hashPassword(TEST_PASSWORD);
  return testHash;
}

export interface UserOptions {
  email: string;
  verified: boolean;
  staff: boolean;
  firstName: string;
}

let counter = 0;

/** The row of a user with TEST_PASSWORD (its hash given), verified unless told otherwise. */
function userRow(email: string, hash: string, options: Partial<UserOptions> = {}): NewRow<'users'> {
  const now = new Date().toISOString();
  return {
    email,
    password_hash: hash,
    first_name: options.firstName ?? '',
    last_name: '',
    display_name: '',
    email_verified_at: (options.verified ?? true) ? now : null,
    is_active: 1,
    is_staff: options.staff ? 1 : 0,
    created_at: now,
    updated_at: now,
  };
}

/** A user row with TEST_PASSWORD, verified unless told otherwise; the e-mail is stored lower-cased, as sign-up does. */
export async function user(db: Executor, options: Partial<UserOptions> = {}): Promise<{ id: number; email: string }> {
  const email = normaliseEmail(options.email ?? `user${++counter}-${process.pid}@example.com`);
  const row = await db
    .insertInto('users')
    .values(userRow(email, await testPasswordHash(), options))
    .returning('id')
    .executeTakeFirstOrThrow();
  return { id: row.id, email };
}

/** A maker of verified user rows with TEST_PASSWORD, for tests that insert many at once. */
export async function verifiedUserRows(): Promise<(email: string) => NewRow<'users'>> {
  const hash = await testPasswordHash();
  return (email) => userRow(email, hash);
}
