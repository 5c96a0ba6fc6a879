// The dashboard's pages in one encapsulated group: home (/), teams and their members, a team's audit
// log, webhooks and their delivery log, authorized applications. Each capability keeps its pages in its own folder;
// what they share is set up here once: the error pages (a refusal thrown as an HttpProblem becomes
// an HTML page with its status), the CSRF check of every form post, and the login every page but
// the landing page needs.
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app-context.ts';
import { redirectToLogin } from '../accounts/session-auth.ts';
import { registerAuditPage } from '../audit/page.ts';
import { registerApplicationsPage } from '../oauth/pages-applications.ts';
import { memberTeam } from '../teams/page-access.ts';
import { registerTeamPages } from '../teams/pages-routes.ts';
import { usePageErrors, verifyCsrf } from '../web/render.ts';
import { registerWebhookPages } from '../webhooks/pages-routes.ts';
import { registerHomePage } from './home.ts';

export async function registerDashboard(app: FastifyInstance, ctx: AppContext) {
  await app.register(async (pages) => {
    usePageErrors(pages, '/');
    pages.addHook('preHandler', async (request, reply) => {
      if (request.method === 'POST') verifyCsrf(request);
      if (request.identity.user || request.routeOptions.url === '/') return;
      // A form posted after the session ended comes back to the dashboard after login.
      return redirectToLogin(reply, request.method === 'GET' ? request.url : '/');
    });
    registerHomePage(pages, ctx);
    registerTeamPages(pages, ctx);
    registerAuditPage(pages, ctx, memberTeam);
    registerWebhookPages(pages, ctx);
    registerApplicationsPage(pages, ctx);
  });
}
