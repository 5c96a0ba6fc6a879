// Pages oidc-provider renders itself (the device flow, its error page) are written to the library's
// Koa context, outside Fastify's reply, so they cannot go through web/render.ts's renderPage. They
// use the same templates and layout: mount.ts stashes the page state (user, CSRF token of the
// layout's logout form) on the raw request before it hands it over, and pageHtml() draws with it.
import type { IncomingMessage } from 'node:http';
import type { FastifyRequest } from 'fastify';
import type { AuthUser } from '../http/identity.ts';
import { csrfToken, eta } from '../web/render.ts';
import { STYLESHEET_PATH } from '../web/static.ts';

interface StashedPage {
  user: AuthUser | null;
  csrfToken: string;
}

const PAGE = Symbol('svc page state');

export function stashPage(request: FastifyRequest) {
  if (!request.page) return;
  (request.raw as unknown as Record<symbol, StashedPage>)[PAGE] = {
    user: request.identity.user,
    csrfToken: csrfToken(request),
  };
}

export function pageHtml(
  req: IncomingMessage,
  template: string,
  data: { title: string; error?: string | null; [key: string]: unknown },
): string {
  const state = (req as unknown as Record<symbol, StashedPage | undefined>)[PAGE] ?? { user: null, csrfToken: '' };
  const common = { csrfToken: state.csrfToken, csrfField: '', user: state.user, currentPath: '' };
  const body = eta.render(template, { ...data, ...common });
  return eta.render('web/views/layout', {
    ...common,
    title: data.title,
    error: data.error ?? null,
    notice: null,
    body,
    stylesheet: STYLESHEET_PATH,
  });
}
