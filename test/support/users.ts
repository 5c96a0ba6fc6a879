// Users written straight into the table for tests that need many of them: one argon2 hash shared by
// all (hashing each would take seconds), verified and active.
import { hashPassword } from '../../src/accounts/passwords.ts';
import type { NewRow } from '../../src/db/schema.ts';

/** A maker of verified user rows whose password is `password`. */
export async function verifiedUserRows(password = 'a long password'): Promise<(email: string) => NewRow<'users'>> {
  const hash = await hashPassword(password);
  const now = new Date().toISOString();
  return (email) => ({
    email,
    password_hash: hash,
    first_name: '',
    last_name: '',
    display_name: '',
    email_verified_at: now,
    is_active: 1,
    is_staff: 0,
    created_at: now,
    updated_at: now,
  });
}
