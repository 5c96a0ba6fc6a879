// `/`: a short landing page for visitors (log in, sign up, the API docs), and for a logged-in user
// the dashboard: their teams with their role and member count, and shortcuts to the account pages.
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app-context.ts';
import { teamsOverview } from '../teams/overview.ts';
import { renderPage } from '../web/render.ts';

export function registerHomePage(pages: FastifyInstance, ctx: AppContext) {
  pages.get('/', async (request, reply) => {
    const user = request.identity.user;
    if (!user) {
      return renderPage(reply, 'dashboard/views/landing', {
        title: 'Welcome to svc',
        apiDocs: ctx.config.apiDocsPublic ? '/api/docs/' : null,
      });
    }
    return renderPage(reply, 'dashboard/views/home', {
      title: 'Dashboard',
      teams: await teamsOverview(ctx.db, user.id),
    });
  });
}
