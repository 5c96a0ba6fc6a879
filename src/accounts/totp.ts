// TOTP (RFC 6238) second factor with `otpauth`: SHA-1, 6 digits, 30 s, the settings every
// authenticator app supports. The seed is encrypted at rest (util/encryption.ts, bound to the user
// id). A code is accepted for the current step and one step either side (clock drift), and never
// twice: the last accepted step is stored and a code of that step or an earlier one is refused.
// Recovery codes: 10 single-use codes, stored as SHA-256 (they are 50 random bits, not passwords).
import { createHash, randomBytes, randomInt } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import type { AppContext } from '../app-context.ts';
import { decryptSecret, encryptSecret } from '../util/encryption.ts';
import { nowIso } from '../util/time.ts';

const PERIOD = 30;
const ISSUER = 'svc';
const RECOVERY_CODE_COUNT = 10;
const RECOVERY_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';

const context = (userId: number) => `totp:${userId}`;

function totpFor(secretBase32: string, label: string) {
  return new TOTP({
    issuer: ISSUER,
    label,
    algorithm: 'SHA1',
    digits: 6,
    period: PERIOD,
    secret: Secret.fromBase32(secretBase32),
  });
}

export interface TotpStatus {
  enrolled: boolean;
  pending: boolean;
  recoveryCodesLeft: number;
}

export async function totpStatus(ctx: AppContext, userId: number): Promise<TotpStatus> {
  const row = await ctx.db.kysely
    .selectFrom('user_totp')
    .select(['confirmed_at'])
    .where('user_id', '=', userId)
    .executeTakeFirst();
  const left = await ctx.db.kysely
    .selectFrom('recovery_codes')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .executeTakeFirstOrThrow();
  return { enrolled: !!row?.confirmed_at, pending: !!row && !row.confirmed_at, recoveryCodesLeft: Number(left.n) };
}

export async function hasTotp(ctx: AppContext, userId: number): Promise<boolean> {
  const row = await ctx.db.kysely
    .selectFrom('user_totp')
    .select('confirmed_at')
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return !!row?.confirmed_at;
}

/** Starts (or restarts) enrolment: a fresh unconfirmed seed. Refused when TOTP is already on. */
export async function beginEnrolment(ctx: AppContext, userId: number): Promise<boolean> {
  if (await hasTotp(ctx, userId)) return false;
  const secret = new Secret({ size: 20 }).base32;
  const encrypted = encryptSecret(ctx.config.secretKey!, secret, context(userId));
  await ctx.db.kysely.deleteFrom('user_totp').where('user_id', '=', userId).execute();
  await ctx.db.kysely
    .insertInto('user_totp')
    .values({ user_id: userId, secret_encrypted: encrypted, confirmed_at: null, created_at: nowIso() })
    .execute();
  return true;
}

export interface EnrolmentView {
  secret: string;
  /** The secret in groups of four, easier to type. */
  secretGrouped: string;
  uri: string;
  qrSvgDataUrl: string;
}

/** What the enrolment page shows for an unconfirmed seed, or null when none is pending. */
export async function pendingEnrolment(ctx: AppContext, userId: number, email: string): Promise<EnrolmentView | null> {
  const row = await ctx.db.kysely
    .selectFrom('user_totp')
    .select(['secret_encrypted', 'confirmed_at'])
    .where('user_id', '=', userId)
    .executeTakeFirst();
  if (!row || row.confirmed_at) return null;
  const secret = decryptSecret(ctx.config.secretKey!, row.secret_encrypted, context(userId));
  const uri = totpFor(secret, email).toString();
  // Loaded on the first enrolment page, not at start (docs/architecture.md, "Lazy loading").
  const { default: QRCode } = await import('qrcode');
  const svg = await QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
  return {
    secret,
    secretGrouped: secret.replace(/(.{4})/g, '$1 ').trim(),
    uri,
    qrSvgDataUrl: `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`,
  };
}

/**
 * Checks a 6-digit code against the user's seed (confirmed, or the pending one when `pending`) and,
 * when it fits a step not used before, records that step. True only then.
 */
export async function verifyTotpCode(
  ctx: AppContext,
  userId: number,
  code: string,
  options: { pending?: boolean } = {},
): Promise<boolean> {
  const digits = code.replace(/\s+/g, '');
  if (!/^\d{6}$/.test(digits)) return false;
  const row = await ctx.db.kysely.selectFrom('user_totp').selectAll().where('user_id', '=', userId).executeTakeFirst();
  if (!row || (options.pending ? row.confirmed_at !== null : row.confirmed_at === null)) return false;
  const secret = decryptSecret(ctx.config.secretKey!, row.secret_encrypted, context(userId));
  const now = Date.now();
  const delta = totpFor(secret, '').validate({ token: digits, window: 1, timestamp: now });
  if (delta === null) return false;
  const step = Math.floor(now / 1000 / PERIOD) + delta;
  // Compare-and-set on the step: a replay, even a concurrent one, loses.
  const result = await ctx.db.kysely
    .updateTable('user_totp')
    .set({ last_used_step: step })
    .where('user_id', '=', userId)
    .where('last_used_step', '<', step)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

const hashCode = (code: string) => createHash('sha256').update(code.toLowerCase().replace(/[\s-]/g, '')).digest('hex');

function newRecoveryCode(): string {
  let code = '';
  for (let i = 0; i < 10; i++) code += RECOVERY_ALPHABET[randomInt(RECOVERY_ALPHABET.length)];
  return `${code.slice(0, 5)}-${code.slice(5)}`;
}

/** Replaces the user's recovery codes; returns the raw codes (shown once). */
export async function regenerateRecoveryCodes(ctx: AppContext, userId: number): Promise<string[]> {
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
  const now = nowIso();
  await ctx.db.kysely.transaction().execute(async (trx) => {
    await trx.deleteFrom('recovery_codes').where('user_id', '=', userId).execute();
    await trx
      .insertInto('recovery_codes')
      .values(codes.map((code) => ({ user_id: userId, code_hash: hashCode(code), used_at: null, created_at: now })))
      .execute();
  });
  return codes;
}

/** Confirms a pending enrolment with a code; returns the recovery codes, or null when the code is wrong. */
export async function confirmEnrolment(ctx: AppContext, userId: number, code: string): Promise<string[] | null> {
  if (!(await verifyTotpCode(ctx, userId, code, { pending: true }))) return null;
  await ctx.db.kysely
    .updateTable('user_totp')
    .set({ confirmed_at: nowIso() })
    .where('user_id', '=', userId)
    .where('confirmed_at', 'is', null)
    .execute();
  return regenerateRecoveryCodes(ctx, userId);
}

/** Uses a recovery code (login and re-auth only; never for JWT issuance). */
export async function useRecoveryCode(ctx: AppContext, userId: number, code: string): Promise<boolean> {
  if (!/^[a-z0-9-\s]{10,14}$/i.test(code.trim())) return false;
  const result = await ctx.db.kysely
    .updateTable('recovery_codes')
    .set({ used_at: nowIso() })
    .where('user_id', '=', userId)
    .where('code_hash', '=', hashCode(code.trim()))
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function deactivateTotp(ctx: AppContext, userId: number): Promise<void> {
  await ctx.db.kysely.transaction().execute(async (trx) => {
    await trx.deleteFrom('user_totp').where('user_id', '=', userId).execute();
    await trx.deleteFrom('recovery_codes').where('user_id', '=', userId).execute();
  });
}

/** A code for `secret` at `timestamp` (tests and the docs' examples). */
export function totpCodeAt(secretBase32: string, timestamp = Date.now()): string {
  return totpFor(secretBase32.replace(/\s+/g, ''), '').generate({ timestamp });
}

export const randomToken = () => randomBytes(32).toString('base64url');
