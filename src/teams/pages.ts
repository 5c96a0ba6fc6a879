// The browser side of an invitation: /invitations/<token>/, the page the e-mail links to.
// - logged in, verified, the invited address: one "Accept" button (a POST with the CSRF token);
// - logged in as someone else, or unverified: says so, and offers to switch account / resend the
//   confirmation;
// - not logged in: "Log in to accept" (login comes back here through `next`), or, when no account has
//   the invited address yet, a sign-up form on this page. Signing up here marks the address verified:
//   the token arrived in that mailbox, which is the same proof the confirmation link gives (Slack and
//   GitHub invitations do the same). The new session then comes back to the Accept button.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppContext } from '../app-context.ts';
import { requestActor } from '../audit/actor.ts';
import { passwordProblem } from '../accounts/password-policy.ts';
import { redirectToLogin } from '../accounts/session-auth.ts';
import { createUser, findUserByEmail, MIN_PASSWORD_LENGTH } from '../accounts/users.ts';
import { statusOf } from '../http/error-answers.ts';
import { ConflictError } from '../util/domain-errors.ts';
import { formString } from '../web/forms.ts';
import { renderPage, seeOther, usePageErrors, verifyCsrf } from '../web/render.ts';
import { acceptInvitation, openInvitation, type InvitationPreview } from './invitations.ts';

// Browser pages are not part of the API document.
const HIDDEN = { schema: { hide: true } };
const tokenOf = (request: FastifyRequest) => (request.params as { token: string }).token;
const pagePath = (token: string) => `/invitations/${encodeURIComponent(token)}/`;

export function registerInvitationPages(app: FastifyInstance, ctx: AppContext) {
  const db = ctx.db.kysely;

  /** The page's data for the viewer's situation (see the file comment). */
  async function show(
    request: FastifyRequest,
    invitation: InvitationPreview,
    token: string,
    error: string | null = null,
  ) {
    const user = request.identity.user;
    let state: 'accept' | 'other-user' | 'unverified' | 'anonymous';
    let hasAccount = false;
    if (!user) {
      state = 'anonymous';
      hasAccount = Boolean(await findUserByEmail(db, invitation.email));
    } else if (user.email !== invitation.email) {
      state = 'other-user';
    } else {
      const row = await findUserByEmail(db, user.email);
      state = row?.email_verified_at ? 'accept' : 'unverified';
    }
    return {
      title: `Join ${invitation.team.name}`,
      invitation,
      state,
      hasAccount,
      path: pagePath(token),
      loginUrl: `/accounts/login/?next=${encodeURIComponent(pagePath(token))}`,
      minLength: MIN_PASSWORD_LENGTH,
      error,
    };
  }

  // An invitation that cannot be opened or accepted (unknown: 404, used or expired: 410, another
  // address: 403) is the error page usePageErrors renders from the service's DomainError.
  app.register(async (pages) => {
    usePageErrors(pages);

    pages.get('/invitations/:token/', HIDDEN, async (request, reply) => {
      const token = tokenOf(request);
      const invitation = await openInvitation(db, token);
      const data = await show(request, invitation, token);
      return renderPage(reply, 'teams/views/invitation', data);
    });

    pages.post('/invitations/:token/', HIDDEN, async (request, reply) => {
      verifyCsrf(request);
      const token = tokenOf(request);
      const user = request.identity.user;
      if (!user) return redirectToLogin(reply, pagePath(token));
      const { team, role } = await acceptInvitation(ctx, token, user.id, requestActor(request, ctx.clientAddresses));
      return renderPage(reply, 'teams/views/joined', { title: `Welcome to ${team.name}`, team, role });
    });

    pages.post('/invitations/:token/signup/', HIDDEN, async (request, reply) => {
      verifyCsrf(request);
      const token = tokenOf(request);
      if (request.identity.user) return seeOther(reply, pagePath(token));
      const invitation = await openInvitation(db, token);
      const password = formString(request, 'password', { trim: false, max: 2000 });
      const problem = passwordProblem(password, invitation.email);
      if (problem) {
        const data = await show(request, invitation, token, problem);
        return renderPage(reply, 'teams/views/invitation', data, { status: 400 });
      }
      let userId: number;
      try {
        userId = await createUser(db, { email: invitation.email, password, verified: true });
      } catch (error) {
        if (!(error instanceof ConflictError)) throw error;
        // Lost a race with another sign-up for the address: log in instead.
        const data = await show(
          request,
          invitation,
          token,
          'An account with this address already exists: log in to accept.',
        );
        return renderPage(reply, 'teams/views/invitation', data, { status: statusOf(error) });
      }
      await ctx.sessions.start(request, reply, userId, 'full');
      return seeOther(reply, pagePath(token));
    });

    // Logged in as someone else: log out and come back through the login page.
    pages.post('/invitations/:token/switch-account/', HIDDEN, async (request, reply) => {
      verifyCsrf(request);
      await ctx.sessions.end(request, reply);
      return redirectToLogin(reply, pagePath(tokenOf(request)));
    });
  });
}
