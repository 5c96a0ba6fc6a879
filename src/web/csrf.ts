// CSRF protection for forms and for session-authenticated API calls. A token is an HMAC, keyed by
// SECRET_KEY, over a random per-browser seed (the `svc_csrf` cookie) and the session id, so a token
// is only good for that browser and that session: one taken before login stops working after it,
// and a planted seed cookie is useless without a token minted for the victim's session.
// Hand-written (a dozen lines) because @fastify/csrf-protection would add a second cookie scheme.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { HttpProblem } from '../http/problem.ts';

export const CSRF_COOKIE = 'svc_csrf';
/** The header a browser script sends with a session on POST/PUT/PATCH/DELETE under /api/. */
export const CSRF_HEADER = 'x-csrf-token';
/** The form field every page form carries. */
export const CSRF_FIELD = 'csrf_token';

export function newCsrfSeed(): string {
  return randomBytes(18).toString('base64url');
}

export function computeCsrfToken(secretKey: string, seed: string, sessionId: string | null): string {
  return createHmac('sha256', secretKey)
    .update(`csrf|${seed}|${sessionId ?? ''}`)
    .digest('base64url');
}

export function csrfTokenMatches(
  secretKey: string,
  seed: string | undefined,
  sessionId: string | null,
  presented: unknown,
): boolean {
  if (!seed || typeof presented !== 'string' || presented.length === 0 || presented.length > 100) return false;
  const expected = Buffer.from(computeCsrfToken(secretKey, seed, sessionId));
  const actual = Buffer.from(presented);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

export const csrfFailure = () => new HttpProblem(403, 'CSRF token missing or invalid. Reload the page and try again.');

/** The token a form or script presents: the form field, else the header. */
export function presentedCsrfToken(request: FastifyRequest): unknown {
  const body = request.body as Record<string, unknown> | undefined;
  if (body && typeof body === 'object' && CSRF_FIELD in body) return body[CSRF_FIELD];
  return request.headers[CSRF_HEADER];
}
