// Server-side browser sessions, stored in the database so every app process shares them. The
// cookie holds 32 random bytes; the row is keyed by their SHA-256, so the table alone opens nothing.
// A session is 'mfa' after the password step of a TOTP user (good only for the TOTP form, 10
// minutes) and 'full' after login completes. Deleting the row (logout, password reset) ends it;
// a deactivated user's sessions stop working on their next request (the load joins users.is_active).
// One SessionStore per app (ctx.sessions). A request's session is loaded once, by the authentication
// hook, into request.identity.session (http/identity.ts); handlers read it from there.
import { createHash, randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';
import type { Db } from '../db/connection.ts';
import type { ClientAddresses } from '../http/client-address.ts';
import type { SessionInfo } from '../http/identity.ts';
import { nowIso, isoAfter } from '../util/time.ts';
import { toAuthUser } from './users.ts';

export const SESSION_COOKIE = 'svc_session';
const PENDING_MFA_TTL_SECONDS = 600;
// last_seen_at is bookkeeping for people looking at their sessions: written at most every 5 minutes.
const LAST_SEEN_GRANULARITY_MS = 5 * 60_000;
const COOKIE_VALUE = /^[A-Za-z0-9_-]{43}$/;

export type SessionStage = SessionInfo['stage'];

const hashOf = (value: string) => createHash('sha256').update(value).digest('hex');

/**
 * The session cookie's value. Read from the header directly rather than request.cookies: the
 * authentication hook runs before the cookie plugin's own.
 */
export function sessionCookieValue(request: FastifyRequest): string | null {
  const header = request.headers.cookie;
  if (!header) return null;
  const match = /(?:^|;\s*)svc_session=([^;\s]+)/.exec(header);
  return match && COOKIE_VALUE.test(match[1]) ? match[1] : null;
}

export class SessionStore {
  // The Db, not its Kysely instance: every statement goes through whatever db.kysely is now.
  readonly #db: Db;
  readonly #config: Config;
  readonly #clientAddresses: ClientAddresses;

  constructor(db: Db, config: Config, clientAddresses: ClientAddresses) {
    this.#db = db;
    this.#config = config;
    this.#clientAddresses = clientAddresses;
  }

  /** The live session (either stage) of a cookie value, with one query; null when unknown, expired or its user inactive. */
  async load(cookie: string): Promise<SessionInfo | null> {
    const now = Date.now();
    const db = this.#db.kysely;
    const row = await db
      .selectFrom('sessions as s')
      .innerJoin('users as u', 'u.id', 's.user_id')
      .select([
        's.id as session_id',
        's.stage',
        's.reauth_at',
        's.last_seen_at',
        's.expires_at',
        'u.id',
        'u.email',
        'u.first_name',
        'u.last_name',
        'u.display_name',
        'u.is_staff',
        'u.is_active',
        'u.email_verified_at',
      ])
      .where('s.id', '=', hashOf(cookie))
      .executeTakeFirst();
    if (!row || row.is_active !== 1 || Date.parse(row.expires_at) <= now) return null;
    if (now - Date.parse(row.last_seen_at) > LAST_SEEN_GRANULARITY_MS) {
      // Not awaited: a lost timestamp is harmless, a slower page is not.
      db.updateTable('sessions')
        .set({ last_seen_at: new Date(now).toISOString() })
        .where('id', '=', row.session_id)
        .execute()
        .catch(() => {});
    }
    return {
      id: row.session_id,
      stage: row.stage,
      account: toAuthUser(row),
      emailVerified: row.email_verified_at !== null,
      reauthAt: row.reauth_at ? Date.parse(row.reauth_at) : null,
    };
  }

  #cookieOptions(maxAgeSeconds: number) {
    return {
      path: '/',
      httpOnly: true,
      sameSite: 'lax' as const,
      secure: this.#config.baseUrl.startsWith('https:'),
      maxAge: maxAgeSeconds,
    };
  }

  /**
   * Starts a session for `userId`, replacing whatever session the browser had (a new id at every
   * login: session fixation defence). A 'full' session counts as freshly re-authenticated.
   */
  async start(request: FastifyRequest, reply: FastifyReply, userId: number, stage: SessionStage): Promise<string> {
    const db = this.#db.kysely;
    const previous = sessionCookieValue(request);
    if (previous) await db.deleteFrom('sessions').where('id', '=', hashOf(previous)).execute();
    const cookie = randomBytes(32).toString('base64url');
    const ttl = stage === 'full' ? this.#config.accounts.sessionTtlSeconds : PENDING_MFA_TTL_SECONDS;
    const now = nowIso();
    const id = hashOf(cookie);
    await db
      .insertInto('sessions')
      .values({
        id,
        user_id: userId,
        stage,
        created_at: now,
        last_seen_at: now,
        expires_at: isoAfter(ttl),
        reauth_at: stage === 'full' ? now : null,
        ip: this.#clientAddresses.of(request.raw).slice(0, 64),
        user_agent: String(request.headers['user-agent'] ?? '').slice(0, 300),
      })
      .execute();
    reply.setCookie(SESSION_COOKIE, cookie, this.#cookieOptions(ttl));
    return id;
  }

  /** Ends the browser's session (logout). */
  async end(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const cookie = sessionCookieValue(request);
    if (cookie) await this.#db.kysely.deleteFrom('sessions').where('id', '=', hashOf(cookie)).execute();
    reply.clearCookie(SESSION_COOKIE, { path: '/' });
  }

  async markReauthenticated(sessionId: string): Promise<void> {
    await this.#db.kysely.updateTable('sessions').set({ reauth_at: nowIso() }).where('id', '=', sessionId).execute();
  }

  /** Ends every session of a user, optionally but one. */
  async endForUser(userId: number, exceptSessionId?: string): Promise<void> {
    let query = this.#db.kysely.deleteFrom('sessions').where('user_id', '=', userId);
    if (exceptSessionId) query = query.where('id', '!=', exceptSessionId);
    await query.execute();
  }

  /** How many unexpired sessions the user has (pending TOTP steps excluded). */
  async countForUser(userId: number): Promise<number> {
    const row = await this.#db.kysely
      .selectFrom('sessions')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('user_id', '=', userId)
      .where('stage', '=', 'full')
      .where('expires_at', '>', nowIso())
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }
}
