// Wires the browser side into the app: cookies, form bodies, the stylesheet, and an onRequest hook
// that gives every page request its PageState (the CSRF seed, a pending notice). Who the browser is
// comes from request.identity, which app.ts's authentication hook set from the session cookie on
// page paths (isPagePath) before this hook runs. API paths skip both: they authenticate through the
// Authorization header, or the session cookie checked for CSRF (http/auth.ts).
import { createHmac } from 'node:crypto';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app-context.ts';
import { CSRF_COOKIE, newCsrfSeed } from './csrf.ts';
import { takeNotice } from './render.ts';
import { registerStatic } from './static.ts';

export function secureCookies(ctx: AppContext): boolean {
  return ctx.config.baseUrl.startsWith('https:');
}

// Paths that are never pages: the API (its own auth), the MCP endpoint (bearer tokens only), inbound
// provider webhooks (machine callers, signed messages: a CSRF cookie and a session lookup per
// notification would be a sizeable share of the SNS intake), the OAuth endpoints that machines call
// (token, device authorization, registration, revocation, introspection, keys), static files, health,
// metrics, discovery documents.
const NOT_A_PAGE =
  /^\/(api\/|mcp(?:[/?]|$)|webhooks\/|o\/(token|device-authorization|register|revoke|introspect|jwks)\/|static\/|healthz|readyz|metrics|\.well-known\/)/;
/** Whether a path is a page: it gets PageState, and a session cookie is looked up for it. */
export const isPagePath = (url: string) => !NOT_A_PAGE.test(url);

export async function installWeb(app: FastifyInstance, ctx: AppContext) {
  const secretKey = ctx.config.secretKey!;
  // Cookie signatures use a key derived for that purpose only, never SECRET_KEY itself.
  const cookieKey = createHmac('sha256', secretKey).update('svc cookie signing').digest();
  await app.register(cookie, { secret: cookieKey, hook: 'onRequest' });
  await app.register(formbody);
  registerStatic(app);
  app.decorateRequest('page', null);
  const secure = secureCookies(ctx);

  // Synchronous (callback style): the session was looked up already, so nothing here waits.
  app.addHook('onRequest', (request, reply, done) => {
    if (!isPagePath(request.url)) return done();
    let seed = request.cookies[CSRF_COOKIE];
    if (!seed || seed.length > 64) {
      seed = newCsrfSeed();
      // Written on the raw response so that pages answered outside Fastify's reply (the OAuth mount
      // hijacks it) send it too; for normal replies @fastify/cookie folds it into its Set-Cookie.
      const options = { path: '/', httpOnly: true, sameSite: 'lax' as const, secure };
      reply.raw.setHeader('Set-Cookie', app.serializeCookie(CSRF_COOKIE, seed, options));
      // The cookie arrives with the next request; verifyCsrf compares against the one sent.
    }
    request.page = {
      csrfSeed: seed,
      secretKey,
      notice: takeNotice(request, reply),
      secureCookies: secure,
    };
    done();
  });
}
