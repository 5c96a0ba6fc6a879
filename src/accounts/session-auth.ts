// What other capabilities use about the browser's session: the session resolver that the
// authentication hook asks (http/auth.ts: pages get the session of either stage; the API accepts a
// full session's cookie alone, as kind 'session' with the user's full access, and unsafe methods
// need the X-CSRF-Token header), redirectToLogin(), hasRecentReauth(). The user of a request is
// request.identity.user (http/identity.ts), wherever it was learned.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../app-context.ts';
import type { SessionResolver } from '../http/auth.ts';
import { ANONYMOUS, type Identity, type SessionInfo } from '../http/identity.ts';
import { HttpProblem } from '../http/problem.ts';
import { CSRF_HEADER, csrfTokenMatches } from '../web/csrf.ts';
import { sessionCookieValue } from './sessions.ts';

/**
 * `next` when it is a local path ("/accounts/tokens/?x=1"), else the fallback. Refuses absolute
 * URLs, scheme-relative "//host" and "/\host" (browsers read both as another host), and control
 * characters, so no redirect leaves the site.
 */
export function safeNextPath(next: unknown, fallback = '/accounts/profile/'): string {
  if (typeof next !== 'string' || next.length === 0 || next.length > 2000) return fallback;
  if (!next.startsWith('/') || next.startsWith('//') || next.startsWith('/\\')) return fallback;
  if (/[\u0000-\u001f\u007f\\]/.test(next)) return fallback;
  return next;
}

/** 303 to the login page, which comes back to `nextPath` (a local path) after login (and TOTP). */
export function redirectToLogin(reply: FastifyReply, nextPath: string) {
  const next = safeNextPath(nextPath);
  return reply
    .code(303)
    .header('Location', `/accounts/login/?next=${encodeURIComponent(next)}`)
    .send();
}

/** 303 to the re-authentication page, which comes back to `nextPath`. */
export function redirectToReauth(reply: FastifyReply, nextPath: string) {
  const next = safeNextPath(nextPath);
  return reply
    .code(303)
    .header('Location', `/accounts/reauthenticate/?next=${encodeURIComponent(next)}`)
    .send();
}

/**
 * True when this request's session proved the password or a TOTP code (login counts) within the
 * last `maxAgeSeconds`.
 */
export function hasRecentReauth(request: FastifyRequest, maxAgeSeconds: number): boolean {
  const session = request.identity.session;
  return (
    session?.stage === 'full' && session.reauthAt !== null && Date.now() - session.reauthAt <= maxAgeSeconds * 1000
  );
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

function csrfSeedOf(request: FastifyRequest): string | undefined {
  const match = /(?:^|;\s*)svc_csrf=([^;\s]+)/.exec(request.headers.cookie ?? '');
  return match?.[1];
}

/** The identity a session gives: a full session's user, or (pending TOTP) no user but the session. */
export function sessionIdentity(session: SessionInfo): Identity {
  if (session.stage !== 'full') return { ...ANONYMOUS, session };
  return {
    user: session.account,
    kind: 'session',
    credentialId: `session:${session.id.slice(0, 16)}`,
    scopes: null,
    session,
    credentialError: null,
  };
}

/** The session resolver, registered with ctx.authenticator.useSessions(). */
export function sessionResolver(ctx: AppContext): SessionResolver {
  const secretKey = ctx.config.secretKey!;
  return {
    forPage(request) {
      const cookie = sessionCookieValue(request);
      if (!cookie) return null;
      return ctx.sessions.load(cookie).then((session) => (session ? sessionIdentity(session) : ANONYMOUS));
    },
    forApi(request) {
      const cookie = sessionCookieValue(request);
      // The token endpoints authenticate by their body; a browser's cookie there means nothing.
      if (!cookie || request.url.startsWith('/api/auth/')) return null;
      return ctx.sessions.load(cookie).then((session) => {
        if (!session || session.stage !== 'full') return ANONYMOUS;
        if (
          !SAFE_METHODS.has(request.method) &&
          !csrfTokenMatches(secretKey, csrfSeedOf(request), session.id, request.headers[CSRF_HEADER])
        ) {
          throw new HttpProblem(
            403,
            `A request authenticated by the session cookie must send the X-CSRF-Token header with the page's CSRF token.`,
          );
        }
        return sessionIdentity(session);
      });
    },
  };
}
