// The dashboard's pages in one encapsulated group: home (/), and the pages each capability keeps in
// its own folder (teams and their members, a team's audit log, webhooks and their delivery log,
// authorized applications), which app.ts hands over. What they share is set up here once: the
// error pages (a refusal thrown as an HttpProblem becomes an HTML page with its status), the CSRF
// check of every form post, and the login every page but the landing page needs.
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app-context.ts';
import { redirectToLogin } from '../accounts/session-auth.ts';
import { usePageErrors, verifyCsrf } from '../web/render.ts';
import { registerHomePage } from './home.ts';

/** Registers one capability's dashboard pages into the group. */
export type DashboardPages = (pages: FastifyInstance, ctx: AppContext) => void;

export async function registerDashboard(
  app: FastifyInstance,
  ctx: AppContext,
  capabilityPages: readonly DashboardPages[],
) {
  await app.register(async (pages) => {
    usePageErrors(pages, '/');
    pages.addHook('preHandler', async (request, reply) => {
      if (request.method === 'POST') verifyCsrf(request);
      if (request.identity.user || request.routeOptions.url === '/') return;
      // A form posted after the session ended comes back to the dashboard after login.
      return redirectToLogin(reply, request.method === 'GET' ? request.url : '/');
    });
    registerHomePage(pages, ctx);
    for (const register of capabilityPages) register(pages, ctx);
  });
}
