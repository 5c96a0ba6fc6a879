// What other capabilities use to know the browser's user: sessionUser() on any path (pages, /o/*),
// redirectToLogin(), hasRecentReauth(), and the ambient resolver that lets a logged-in browser call
// the API with its session cookie (kind 'session', the user's full access; unsafe methods need the
// X-CSRF-Token header; a request with an Authorization header never looks at the session).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../app-context.ts';
import type { AmbientResolver, AuthUser } from '../http/auth.ts';
import { HttpProblem } from '../http/problem.ts';
import { CSRF_HEADER, csrfTokenMatches } from '../web/csrf.ts';
import type { ViewerLoader } from '../web/install.ts';
import { loadSession, loadedSession, sessionCookieValue } from './sessions.ts';

export { CSRF_HEADER } from '../web/csrf.ts';
export { loadSession } from './sessions.ts';

/** The logged-in user of this request's session cookie, or null (no session, TOTP step pending, expired, inactive). */
export async function sessionUser(ctx: AppContext, request: FastifyRequest): Promise<AuthUser | null> {
  const session = await loadSession(ctx, request);
  return session?.stage === 'full' ? session.user : null;
}

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
  return reply.code(303).header('Location', `/accounts/login/?next=${encodeURIComponent(next)}`).send();
}

/** 303 to the re-authentication page, which comes back to `nextPath`. */
export function redirectToReauth(reply: FastifyReply, nextPath: string) {
  const next = safeNextPath(nextPath);
  return reply.code(303).header('Location', `/accounts/reauthenticate/?next=${encodeURIComponent(next)}`).send();
}

/**
 * True when this request's session proved the password or a TOTP code (login counts) within the
 * last `maxAgeSeconds`. Needs the session loaded (sessionUser/loadSession, or any page request).
 */
export function hasRecentReauth(request: FastifyRequest, maxAgeSeconds: number): boolean {
  const session = loadedSession(request);
  return session?.stage === 'full' && session.reauthAt !== null && Date.now() - session.reauthAt <= maxAgeSeconds * 1000;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

function csrfSeedOf(request: FastifyRequest): string | undefined {
  const match = /(?:^|;\s*)svc_csrf=([^;\s]+)/.exec(request.headers.cookie ?? '');
  return match?.[1];
}

/** The API's session resolver, registered with ctx.authenticator.addAmbient(). */
export function sessionResolver(ctx: AppContext): AmbientResolver {
  const secretKey = ctx.config.secretKey!;
  return async (request) => {
    // The token endpoints authenticate by their body; a browser's cookie there means nothing.
    if (!sessionCookieValue(request) || request.url.startsWith('/api/auth/')) return null;
    const session = await loadSession(ctx, request);
    if (!session || session.stage !== 'full') return null;
    if (!SAFE_METHODS.has(request.method) && !csrfTokenMatches(secretKey, csrfSeedOf(request), session.id, request.headers[CSRF_HEADER])) {
      throw new HttpProblem(403, `A request authenticated by the session cookie must send the X-CSRF-Token header with the page's CSRF token.`);
    }
    return { user: session.user, kind: 'session', scopes: null, credentialId: `session:${session.id.slice(0, 16)}` };
  };
}

/** For installWeb: who the page viewer is. A pending-TOTP session has no user but binds CSRF tokens. */
export function sessionViewer(ctx: AppContext): ViewerLoader {
  return async (request) => {
    if (!sessionCookieValue(request)) return null;
    const session = await loadSession(ctx, request);
    if (!session) return null;
    return { user: session.stage === 'full' ? session.user : null, sessionId: session.id };
  };
}
