// The accounts capability's HTTP side: the session resolver (for pages and the API) and the account pages.
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app-context.ts';
import { usePageErrors } from '../web/render.ts';
import { registerLoginPages } from './pages-login.ts';
import { registerMfaPages } from './pages-mfa.ts';
import { registerPasswordPages } from './pages-password.ts';
import { registerProfilePages } from './pages-profile.ts';
import { registerSignupPages } from './pages-signup.ts';
import { sessionResolver } from './session-auth.ts';

export async function registerAccountPages(app: FastifyInstance, ctx: AppContext) {
  ctx.authenticator.useSessions(sessionResolver(ctx));
  await app.register(async (pages) => {
    usePageErrors(pages);
    registerLoginPages(pages, ctx);
    registerSignupPages(pages, ctx);
    registerPasswordPages(pages, ctx);
    registerProfilePages(pages, ctx);
    registerMfaPages(pages, ctx);
  });
}
