// /accounts/applications/: the OAuth applications the user has authorized (name, scopes, first
// authorized, last used) with "Revoke access", which ends the grant and all its tokens at once
// (applications.ts). Registered by dashboard/routes.ts, which checks the login and CSRF.
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app-context.ts';
import { minuteUtc } from '../web/format.ts';
import { requireUser } from '../http/identity.ts';
import { formString } from '../web/forms.ts';
import { renderError, renderPage, seeOther, setNotice } from '../web/render.ts';
import { listAuthorizedApplications, revokeApplication } from './applications.ts';

const PAGE = '/accounts/applications/';

function lifetime(seconds: number): string {
  if (seconds % 3600 === 0) return seconds === 3600 ? 'hour' : `${seconds / 3600} hours`;
  const minutes = Math.max(1, Math.round(seconds / 60));
  return minutes === 1 ? 'minute' : `${minutes} minutes`;
}

export function registerApplicationsPage(pages: FastifyInstance, ctx: AppContext) {
  pages.get(PAGE, async (request, reply) => {
    const user = requireUser(request).user;
    const applications = await listAuthorizedApplications(ctx, user.id);
    return renderPage(reply, 'oauth/views/applications', {
      title: 'Authorized applications',
      applications: applications.map((app) => ({
        ...app,
        authorized: minuteUtc(app.authorizedAt),
        lastUsed: minuteUtc(app.lastUsedAt, 'never'),
      })),
      describe: (scope: string) => ctx.scopes.describe(scope),
      accessLifetime: lifetime(ctx.config.oauth.accessTokenTtlSeconds),
    });
  });

  pages.post(`${PAGE}revoke/`, async (request, reply) => {
    const user = requireUser(request).user;
    const clientId = formString(request, 'client_id', { max: 512 });
    if (!clientId || !(await revokeApplication(ctx.db.kysely, user.id, clientId))) {
      return renderError(reply, 404, 'You have not authorized an application with that id.', PAGE);
    }
    setNotice(reply, 'Access revoked: the application can no longer act for you.');
    return seeOther(reply, PAGE);
  });
}
