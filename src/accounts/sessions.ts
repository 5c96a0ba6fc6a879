// Server-side browser sessions, stored in the database so every app process shares them. The
// cookie holds 32 random bytes; the row is keyed by their SHA-256, so the table alone opens nothing.
// A session is 'mfa' after the password step of a TOTP user (good only for the TOTP form, 10
// minutes) and 'full' after login completes. Deleting the row (logout, password reset) ends it;
// a deactivated user's sessions stop working on their next request (the load joins users.is_active).
import { createHash, randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../app-context.ts';
import type { AuthUser } from '../http/auth.ts';
import { nowIso, isoAfter } from '../util/time.ts';
import { toAuthUser } from './users.ts';

export const SESSION_COOKIE = 'svc_session';
const PENDING_MFA_TTL_SECONDS = 600;
// last_seen_at is bookkeeping for people looking at their sessions: written at most every 5 minutes.
const LAST_SEEN_GRANULARITY_MS = 5 * 60_000;
const COOKIE_VALUE = /^[A-Za-z0-9_-]{43}$/;

export type SessionStage = 'mfa' | 'full';

export interface LoadedSession {
  id: string;
  stage: SessionStage;
  user: AuthUser;
  emailVerified: boolean;
  /** Epoch ms of the last password/TOTP proof in this session (login counts), or null. */
  reauthAt: number | null;
}

const hashOf = (value: string) => createHash('sha256').update(value).digest('hex');

/**
 * The session cookie's value. Read from the header directly rather than request.cookies: the
 * authenticator runs in an onRequest hook that may come before the cookie plugin's own.
 */
export function sessionCookieValue(request: FastifyRequest): string | null {
  const header = request.headers.cookie;
  if (!header) return null;
  const match = /(?:^|;\s*)svc_session=([^;\s]+)/.exec(header);
  return match && COOKIE_VALUE.test(match[1]) ? match[1] : null;
}

const loading = new WeakMap<FastifyRequest, Promise<LoadedSession | null>>();
const loaded = new WeakMap<FastifyRequest, LoadedSession | null>();

/** The request's session (either stage), loaded once per request with one query. */
export function loadSession(ctx: AppContext, request: FastifyRequest): Promise<LoadedSession | null> {
  let promise = loading.get(request);
  if (!promise) {
    promise = fetchSession(ctx, sessionCookieValue(request)).then((session) => {
      loaded.set(request, session);
      return session;
    });
    loading.set(request, promise);
  }
  return promise;
}

/** The session if loadSession already ran for this request (synchronous helpers use it). */
export function loadedSession(request: FastifyRequest): LoadedSession | null {
  return loaded.get(request) ?? null;
}

async function fetchSession(ctx: AppContext, cookie: string | null): Promise<LoadedSession | null> {
  if (!cookie) return null;
  const now = Date.now();
  const row = await ctx.db.kysely
    .selectFrom('sessions as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .select(['s.id as session_id', 's.stage', 's.reauth_at', 's.last_seen_at', 's.expires_at', 'u.id', 'u.email', 'u.first_name', 'u.last_name', 'u.display_name', 'u.is_staff', 'u.is_active', 'u.email_verified_at'])
    .where('s.id', '=', hashOf(cookie))
    .executeTakeFirst();
  if (!row || row.is_active !== 1 || Date.parse(row.expires_at) <= now) return null;
  if (now - Date.parse(row.last_seen_at) > LAST_SEEN_GRANULARITY_MS) {
    // Not awaited: a lost timestamp is harmless, a slower page is not.
    ctx.db.kysely.updateTable('sessions').set({ last_seen_at: new Date(now).toISOString() }).where('id', '=', row.session_id).execute().catch(() => {});
  }
  return {
    id: row.session_id,
    stage: row.stage,
    user: toAuthUser(row),
    emailVerified: row.email_verified_at !== null,
    reauthAt: row.reauth_at ? Date.parse(row.reauth_at) : null,
  };
}

function cookieOptions(ctx: AppContext, maxAgeSeconds: number) {
  return {
    path: '/',
    httpOnly: true,
    sameSite: 'lax' as const,
    secure: ctx.config.baseUrl.startsWith('https:'),
    maxAge: maxAgeSeconds,
  };
}

/**
 * Starts a session for `userId`, replacing whatever session the browser had (a new id at every
 * login: session fixation defence). A 'full' session counts as freshly re-authenticated.
 */
export async function startSession(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, userId: number, stage: SessionStage): Promise<string> {
  const previous = sessionCookieValue(request);
  if (previous) await ctx.db.kysely.deleteFrom('sessions').where('id', '=', hashOf(previous)).execute();
  const cookie = randomBytes(32).toString('base64url');
  const ttl = stage === 'full' ? ctx.config.accounts.sessionTtlSeconds : PENDING_MFA_TTL_SECONDS;
  const now = nowIso();
  const id = hashOf(cookie);
  await ctx.db.kysely
    .insertInto('sessions')
    .values({
      id,
      user_id: userId,
      stage,
      created_at: now,
      last_seen_at: now,
      expires_at: isoAfter(ttl),
      reauth_at: stage === 'full' ? now : null,
      ip: ctx.clientAddresses.of(request.raw).slice(0, 64),
      user_agent: String(request.headers['user-agent'] ?? '').slice(0, 300),
    })
    .execute();
  reply.setCookie(SESSION_COOKIE, cookie, cookieOptions(ctx, ttl));
  return id;
}

/** Ends the browser's session (logout). */
export async function endSession(ctx: AppContext, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const cookie = sessionCookieValue(request);
  if (cookie) await ctx.db.kysely.deleteFrom('sessions').where('id', '=', hashOf(cookie)).execute();
  reply.clearCookie(SESSION_COOKIE, { path: '/' });
}

export async function markReauthenticated(ctx: AppContext, sessionId: string): Promise<void> {
  await ctx.db.kysely.updateTable('sessions').set({ reauth_at: nowIso() }).where('id', '=', sessionId).execute();
}

/** Ends every session of a user (password reset, deactivation by an operator), optionally but one. */
export async function endUserSessions(ctx: Pick<AppContext, 'db'>, userId: number, exceptSessionId?: string): Promise<void> {
  let query = ctx.db.kysely.deleteFrom('sessions').where('user_id', '=', userId);
  if (exceptSessionId) query = query.where('id', '!=', exceptSessionId);
  await query.execute();
}

/** How many unexpired sessions the user has (pending TOTP steps excluded). */
export async function countUserSessions(ctx: Pick<AppContext, 'db'>, userId: number): Promise<number> {
  const row = await ctx.db.kysely
    .selectFrom('sessions')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('user_id', '=', userId)
    .where('stage', '=', 'full')
    .where('expires_at', '>', nowIso())
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Deletes expired rows (the worker's housekeeping). */
export async function purgeExpiredSessions(ctx: Pick<AppContext, 'db'>): Promise<void> {
  await ctx.db.kysely.deleteFrom('sessions').where('expires_at', '<', nowIso()).execute();
}
