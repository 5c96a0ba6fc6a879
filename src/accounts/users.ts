// Users: creation, lookup, activation. Other folders call these functions, never the table.
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import type { AuthUser } from '../http/identity.ts';
import { ConflictError, ValidationError } from '../util/domain-errors.ts';
import { nowIso } from '../util/time.ts';
import { isValidEmail, normaliseEmail } from './email.ts';
import { hashPassword } from './passwords.ts';

export interface NewUser {
  email: string;
  password: string;
  firstName?: string;
  lastName?: string;
  displayName?: string;
  verified?: boolean;
  staff?: boolean;
}

export const MIN_PASSWORD_LENGTH = 10;

/** Creates a user and returns the id: a bad address or short password → ValidationError, a taken address → ConflictError. */
export async function createUser(db: Kysely<Database>, input: NewUser): Promise<number> {
  const email = normaliseEmail(input.email);
  if (!isValidEmail(email)) throw new ValidationError(`"${input.email}" is not a valid e-mail address.`);
  if (input.password.length < MIN_PASSWORD_LENGTH) {
    throw new ValidationError(`The password must be at least ${MIN_PASSWORD_LENGTH} characters long.`);
  }
  const existing = await db.selectFrom('users').select('id').where('email', '=', email).executeTakeFirst();
  if (existing) throw new ConflictError(`A user with the e-mail ${email} already exists.`);
  const now = nowIso();
  const row = await db
    .insertInto('users')
    .values({
      email,
      password_hash: await hashPassword(input.password),
      first_name: input.firstName ?? '',
      last_name: input.lastName ?? '',
      display_name: input.displayName ?? '',
      email_verified_at: input.verified ? now : null,
      is_active: 1,
      is_staff: input.staff ? 1 : 0,
      created_at: now,
      updated_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

export async function findUserByEmail(db: Kysely<Database>, email: string) {
  return db.selectFrom('users').selectAll().where('email', '=', normaliseEmail(email)).executeTakeFirst();
}

export async function findUserById(db: Kysely<Database>, id: number) {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Returns false when no user has that e-mail. */
export async function setUserActive(db: Kysely<Database>, email: string, active: boolean): Promise<boolean> {
  const result = await db
    .updateTable('users')
    .set({ is_active: active ? 1 : 0, updated_at: nowIso() })
    .where('email', '=', normaliseEmail(email))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export function toAuthUser(row: {
  id: number;
  email: string;
  first_name: string;
  last_name: string;
  display_name: string;
  is_staff: number;
}): AuthUser {
  return {
    id: row.id,
    email: row.email,
    first_name: row.first_name,
    last_name: row.last_name,
    display_name: row.display_name,
    is_staff: row.is_staff === 1,
  };
}

/** The public profile shape of GET /api/v1/me/. */
export function profileOf(user: AuthUser) {
  return {
    id: user.id,
    email: user.email,
    first_name: user.first_name,
    last_name: user.last_name,
    display_name: user.display_name,
  };
}
