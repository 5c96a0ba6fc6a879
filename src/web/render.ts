// Server-rendered pages: one Eta instance (HTML-escaping by default) whose views root is the src/
// folder, so each capability keeps its templates in its own folder ("accounts/views/login",
// "oauth/views/consent") and all share the layout (web/views/layout.eta: title, nav, notices).
import { Eta } from 'eta';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { problemOf } from '../http/error-answers.ts';
import { handleError } from '../http/errors.ts';
import { HttpProblem } from '../http/problem.ts';
import { DomainError } from '../util/domain-errors.ts';
import { CSRF_FIELD, computeCsrfToken, csrfFailure, csrfTokenMatches, presentedCsrfToken } from './csrf.ts';
import { SOURCE_ROOT } from './assets.ts';
import { STYLESHEET_PATH } from './static.ts';

export { CSRF_FIELD, CSRF_HEADER } from './csrf.ts';

/**
 * What the web layer keeps about a page request, set by installWeb's onRequest hook on page paths.
 * Who the viewer is, and the session CSRF tokens are bound to (full or pending TOTP), are in
 * request.identity.
 */
export interface PageState {
  csrfSeed: string;
  secretKey: string;
  /** A one-line notice carried over a redirect (setNotice), shown once. */
  notice: string | null;
  /** Cookies get `Secure` (BASE_URL is https). */
  secureCookies: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    page: PageState | null;
  }
}

// Templates are named by their path under src/ ('accounts/views/login'), from source or from dist/.
export const VIEWS_ROOT = SOURCE_ROOT;

export const eta = new Eta({
  views: VIEWS_ROOT,
  autoEscape: true,
  // Templates are read once per process outside development, so edits show up without a restart there.
  cache: process.env.NODE_ENV !== 'development',
});

/** The page state of a page request (a programming error elsewhere: installWeb's hook did not run). */
export function pageState(request: FastifyRequest): PageState {
  if (!request.page)
    throw new Error(`web page state missing for ${request.url}: is installWeb's hook running on this path?`);
  return request.page;
}

/** The CSRF token for forms on this page (also in the layout's <meta name="csrf-token">). */
export function csrfToken(request: FastifyRequest): string {
  const state = pageState(request);
  return computeCsrfToken(state.secretKey, state.csrfSeed, request.identity.session?.id ?? null);
}

/** Throws a 403 HttpProblem unless the request carries a valid token (form field or X-CSRF-Token). */
export function verifyCsrf(request: FastifyRequest): void {
  const state = request.page;
  if (
    !state ||
    !csrfTokenMatches(
      state.secretKey,
      request.cookies?.svc_csrf,
      request.identity.session?.id ?? null,
      presentedCsrfToken(request),
    )
  ) {
    throw csrfFailure();
  }
}

export interface PageData {
  title: string;
  /** An error line shown above the content (e.g. a failed form). */
  error?: string | null;
  [key: string]: unknown;
}

/**
 * Renders `template` (a path under src/ without extension, e.g. "accounts/views/login", or an
 * absolute path inside src/) into the layout and sends it. Templates get `it` = data plus
 * `csrfField` (the hidden input, raw HTML: `<%~ it.csrfField %>`), `csrfToken` and `user`.
 */
export function renderPage(reply: FastifyReply, template: string, data: PageData, options: { status?: number } = {}) {
  const request = reply.request;
  const state = pageState(request);
  const token = csrfToken(request);
  const common = {
    csrfToken: token,
    csrfField: `<input type="hidden" name="${CSRF_FIELD}" value="${token}">`,
    user: request.identity.user,
    // The layout marks the navigation link of the page shown (aria-current).
    currentPath: request.url.split('?')[0],
  };
  const body = eta.render(template, { ...data, ...common });
  const html = eta.render('web/views/layout', {
    ...common,
    title: data.title,
    error: data.error ?? null,
    notice: state.notice,
    body,
    stylesheet: STYLESHEET_PATH,
  });
  reply.header('Cache-Control', 'no-store');
  reply.header('X-Frame-Options', 'DENY');
  reply.header(
    'Content-Security-Policy',
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self' 'unsafe-inline'; frame-ancestors 'none'; form-action 'self'",
  );
  reply.header('Referrer-Policy', 'same-origin');
  return reply
    .code(options.status ?? 200)
    .type('text/html; charset=utf-8')
    .send(html);
}

/** An HTML error page (used for page paths instead of the API's problem+json). */
export function renderError(reply: FastifyReply, status: number, detail: string, back = '/accounts/profile/') {
  const titles: Record<number, string> = {
    400: 'Bad request',
    403: 'Forbidden',
    404: 'Not found',
    410: 'Link expired',
    429: 'Too many attempts',
  };
  return renderPage(reply, 'web/views/error', { title: titles[status] ?? 'Error', detail, back }, { status });
}

const NOTICE_COOKIE = 'svc_notice';

/** Shows `text` once on the next page this browser renders (after a redirect). Signed cookie. */
export function setNotice(reply: FastifyReply, text: string) {
  reply.setCookie(NOTICE_COOKIE, text, {
    path: '/',
    httpOnly: true,
    sameSite: 'lax',
    signed: true,
    maxAge: 60,
    secure: reply.request.page?.secureCookies ?? false,
  });
}

/** Reads and clears the notice cookie; called by installWeb's hook. */
export function takeNotice(request: FastifyRequest, reply: FastifyReply): string | null {
  const raw = request.cookies?.[NOTICE_COOKIE];
  if (!raw) return null;
  reply.clearCookie(NOTICE_COOKIE, { path: '/' });
  const unsigned = request.unsignCookie(raw);
  return unsigned.valid ? unsigned.value : null;
}

/** A 303 redirect (after a POST the browser GETs the target). */
export function seeOther(reply: FastifyReply, location: string) {
  return reply.code(303).header('Location', location).send();
}

/**
 * Error handler for an encapsulated group of page routes: a DomainError (an invitation gone, a
 * forbidden action) or a 4xx HttpProblem (CSRF failure, bad input) becomes the HTML error page with
 * the status the API would answer, whose link leads to `back`; everything else goes to the API's
 * handler.
 */
export function usePageErrors(pages: FastifyInstance, back?: string) {
  pages.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof DomainError && request.page) {
      const answer = problemOf(error);
      if (answer.headers) reply.headers(answer.headers);
      return renderError(reply, answer.status, answer.detail, back);
    }
    if (error instanceof HttpProblem && error.status < 500 && request.page) {
      if (error.headers) reply.headers(error.headers);
      return renderError(reply, error.status, error.detail, back);
    }
    return handleError(error, request, reply);
  });
}
