// The team page's forms: change a role, remove a member, leave, send and revoke invitations. Each
// calls the service the API calls (members.ts, invitations.ts) under the same policy (policy.ts),
// so the rules, the events and the e-mail are the same whichever door was used. A refusal is shown
// on the team page with the API's status (403, 409, 400); a success redirects back with a notice.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppContext } from '../app-context.ts';
import { isValidEmail, normaliseEmail } from '../accounts/email.ts';
import { requestActor } from '../audit/actor.ts';
import { attempt } from '../web/refusals.ts';
import { formString } from '../web/forms.ts';
import { seeOther, setNotice } from '../web/render.ts';
import { cleanMessage } from './invitation-routes.ts';
import { createInvitation, revokeInvitation, type InvitableRole } from './invitations.ts';
import { changeRole, removeMember } from './members.ts';
import { memberTeam } from './page-access.ts';
import { showTeamPage, type InviteForm } from './pages-team.ts';
import { refuseInvitationAccess, refuseInvite } from './policy.ts';
import { isUuid } from '../util/uuid.ts';
import { ROLES, type Role } from './teams.ts';

const MESSAGE_MAX = 500;

/** The `user_id` path parameter, or null when it cannot be a user id. */
function targetOf(request: FastifyRequest): number | null {
  const { user_id: id } = request.params as { user_id: string };
  return /^\d{1,15}$/.test(id) ? Number(id) : null;
}

export function registerMemberPages(pages: FastifyInstance, ctx: AppContext) {
  const db = ctx.db.kysely;

  pages.post('/teams/:team_id/members/:user_id/role/', async (request, reply) => {
    const access = await memberTeam(db, request);
    const target = targetOf(request);
    const role = formString(request, 'role', { max: 20 });
    if (!ROLES.includes(role as Role))
      return showTeamPage(reply, ctx, access, { error: 'Choose a role: owner, admin or member.', status: 400 });
    if (target === null)
      return showTeamPage(reply, ctx, access, { error: 'That user is not a member of this team.', status: 404 });
    const changed = await attempt(() =>
      changeRole(db, access.team.id, access.user.id, target, role as Role, requestActor(request, ctx.clientAddresses)),
    );
    if (!changed.ok) return showTeamPage(reply, ctx, access, { error: changed.message, status: changed.status });
    setNotice(
      reply,
      `${changed.value.email} is now ${role === 'owner' ? 'an owner' : role === 'admin' ? 'an admin' : 'a member'}.`,
    );
    return seeOther(reply, access.base);
  });

  pages.post('/teams/:team_id/members/:user_id/remove/', async (request, reply) => {
    const access = await memberTeam(db, request);
    const target = targetOf(request);
    if (target === null)
      return showTeamPage(reply, ctx, access, { error: 'That user is not a member of this team.', status: 404 });
    const removed = await attempt(() =>
      removeMember(db, access.team.id, access.user.id, target, requestActor(request, ctx.clientAddresses)),
    );
    if (!removed.ok) return showTeamPage(reply, ctx, access, { error: removed.message, status: removed.status });
    if (target === access.user.id) {
      setNotice(reply, `You have left ${access.team.name}.`);
      return seeOther(reply, '/teams/');
    }
    setNotice(reply, 'The member has been removed from the team.');
    return seeOther(reply, access.base);
  });

  pages.post('/teams/:team_id/leave/', async (request, reply) => {
    const access = await memberTeam(db, request);
    const left = await attempt(() =>
      removeMember(db, access.team.id, access.user.id, access.user.id, requestActor(request, ctx.clientAddresses)),
    );
    if (!left.ok) return showTeamPage(reply, ctx, access, { error: left.message, status: left.status });
    setNotice(reply, `You have left ${access.team.name}.`);
    return seeOther(reply, '/teams/');
  });

  pages.post('/teams/:team_id/invitations/', async (request, reply) => {
    const access = await memberTeam(db, request);
    const form: InviteForm = {
      email: formString(request, 'email', { max: 500 }),
      role: formString(request, 'role', { max: 20 }),
      message: formString(request, 'message', { max: 5000 }),
    };
    const refuse = (error: string, status: number) => showTeamPage(reply, ctx, access, { error, status, invite: form });
    if (form.role === 'owner') {
      return refuse(
        'The owner role cannot be given by invitation; invite an admin or member and make them an owner once they have joined.',
        400,
      );
    }
    if (form.role !== 'admin' && form.role !== 'member') return refuse('Choose a role: member or admin.', 400);
    const role: InvitableRole = form.role;
    const refusal = refuseInvite(access.team.role, role);
    if (refusal) return refuse(refusal, 403);
    const email = normaliseEmail(form.email);
    if (!isValidEmail(email)) return refuse('Not a valid e-mail address.', 400);
    if (form.message.length > MESSAGE_MAX) return refuse(`The message must be at most ${MESSAGE_MAX} characters.`, 400);
    const sent = await attempt(async () =>
      createInvitation(
        ctx,
        { team: access.team, inviter: access.user, email, role, message: cleanMessage(form.message) },
        requestActor(request, ctx.clientAddresses),
      ),
    );
    if (!sent.ok) return refuse(sent.message, sent.status);
    setNotice(reply, `Invitation sent to ${email}.`);
    return seeOther(reply, access.base);
  });

  pages.post('/teams/:team_id/invitations/:invitation_id/revoke/', async (request, reply) => {
    const access = await memberTeam(db, request);
    const refusal = refuseInvitationAccess(access.team.role);
    if (refusal) return showTeamPage(reply, ctx, access, { error: refusal, status: 403 });
    const { invitation_id: id } = request.params as { invitation_id: string };
    if (!isUuid(id))
      return showTeamPage(reply, ctx, access, { error: 'No pending invitation has that id.', status: 404 });
    const revoked = await attempt(() =>
      revokeInvitation(db, access.team.id, id.toLowerCase(), requestActor(request, ctx.clientAddresses)),
    );
    if (!revoked.ok) return showTeamPage(reply, ctx, access, { error: revoked.message, status: revoked.status });
    setNotice(reply, 'The invitation has been revoked; its link no longer works.');
    return seeOther(reply, access.base);
  });
}
