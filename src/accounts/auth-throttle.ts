// Throttling of guessable secrets (login, re-authentication, TOTP codes, password reset, JWT
// issuance): failures are rows in auth_failures, so every app process sees them. A lock applies
// when, within the window, the pair (account, address) has 5 failures, the account alone 20 (slows
// a spread-out guesser without letting a stranger lock someone out entirely), or the address
// alone 50. Unknown e-mail addresses are counted exactly like known ones, so the answers never
// tell whether an account exists. A success clears the pair.
import type { FastifyReply } from 'fastify';
import type { AppContext } from '../app-context.ts';
import { nowIso } from '../util/time.ts';

export const WINDOW_SECONDS = 15 * 60;
const LIMITS = { pair: 5, account: 20, address: 50 };

export type ThrottleAction = 'login' | 'reauth' | 'totp' | 'reset' | 'jwt' | 'verify';

function buckets(action: ThrottleAction, account: string, address: string) {
  // Login, re-auth, TOTP and JWT guess the same secrets, so they share the account's counters.
  const family = action === 'reset' || action === 'verify' ? action : 'auth';
  return {
    pair: `${family}:pair:${account}|${address}`,
    account: `${family}:acct:${account}`,
    address: `${family}:ip:${address}`,
  };
}

export interface ThrottleState {
  locked: boolean;
  /** Seconds until the oldest counted failure leaves the window (when locked). */
  retryAfter: number;
}

/** Whether the (account, address) pair is locked for `action`. One query. */
export async function checkThrottle(
  ctx: AppContext,
  action: ThrottleAction,
  account: string,
  address: string,
): Promise<ThrottleState> {
  const b = buckets(action, account.toLowerCase(), address);
  const since = new Date(Date.now() - WINDOW_SECONDS * 1000).toISOString();
  const rows = await ctx.db.kysely
    .selectFrom('auth_failures')
    .select(['bucket', (eb) => eb.fn.countAll<number>().as('failures'), (eb) => eb.fn.min('created_at').as('oldest')])
    .where('bucket', 'in', [b.pair, b.account, b.address])
    .where('created_at', '>', since)
    .groupBy('bucket')
    .execute();
  let retryAfter = 0;
  for (const row of rows) {
    const limit = row.bucket === b.pair ? LIMITS.pair : row.bucket === b.account ? LIMITS.account : LIMITS.address;
    if (Number(row.failures) >= limit) {
      const wait = Math.ceil((Date.parse(String(row.oldest)) + WINDOW_SECONDS * 1000 - Date.now()) / 1000);
      retryAfter = Math.max(retryAfter, wait, 1);
    }
  }
  // Every caller refuses a locked attempt (a 429, or the page's notice): counted as a refusal.
  if (retryAfter > 0) ctx.metrics?.rateLimitRefused('failed_attempts');
  return { locked: retryAfter > 0, retryAfter };
}

export async function recordFailure(
  ctx: AppContext,
  action: ThrottleAction,
  account: string,
  address: string,
): Promise<void> {
  const b = buckets(action, account.toLowerCase(), address);
  const now = nowIso();
  await ctx.db.kysely
    .insertInto('auth_failures')
    .values([b.pair, b.account, b.address].map((bucket) => ({ bucket, created_at: now })))
    .execute();
  // Housekeeping on the write path, which only failures take: rows older than the window are dead.
  if (Math.random() < 0.05) {
    const cutoff = new Date(Date.now() - WINDOW_SECONDS * 1000).toISOString();
    await ctx.db.kysely.deleteFrom('auth_failures').where('created_at', '<', cutoff).execute();
  }
}

export async function clearFailures(
  ctx: AppContext,
  action: ThrottleAction,
  account: string,
  address: string,
): Promise<void> {
  const b = buckets(action, account.toLowerCase(), address);
  await ctx.db.kysely.deleteFrom('auth_failures').where('bucket', '=', b.pair).execute();
}

export const lockedMessage = (state: ThrottleState) =>
  `Too many failed attempts. Try again in ${Math.max(1, Math.ceil(state.retryAfter / 60))} minute(s).`;

/** For a page answering 429: sets Retry-After and returns the message to show. */
export function lockedOut(reply: FastifyReply, state: ThrottleState): string {
  reply.header('Retry-After', String(state.retryAfter));
  return lockedMessage(state);
}
