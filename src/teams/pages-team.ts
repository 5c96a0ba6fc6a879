// /teams/<team_id>/: the members (name, e-mail, role, joined) and, for owners and admins, the
// pending invitations, the role and removal controls and the "Send invitation" form; for everyone
// "Leave team". The forms post to pages-members.ts, which re-renders this page with the service's
// refusal (403, 409) as its message.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { AppContext } from '../app-context.ts';
import { dayUtc, minuteUtc, personName } from '../web/format.ts';
import { renderPage } from '../web/render.ts';
import { listInvitations } from './invitations.ts';
import { isManager, memberTeam, type TeamPageContext } from './page-access.ts';
import { ROLES, listMembers } from './teams.ts';

/** Members shown per page (?page=N beyond). */
export const MEMBERS_PER_PAGE = 100;

export interface InviteForm {
  email: string;
  role: string;
  message: string;
}

export interface TeamPageExtra {
  error?: string;
  status?: number;
  invite?: InviteForm;
  page?: number;
}

export async function showTeamPage(
  reply: FastifyReply,
  ctx: AppContext,
  access: TeamPageContext,
  extra: TeamPageExtra = {},
) {
  const db = ctx.db.kysely;
  const { team, user } = access;
  const manager = isManager(team.role);
  const page = extra.page ?? 1;
  const members = await listMembers(db, team.id, MEMBERS_PER_PAGE, (page - 1) * MEMBERS_PER_PAGE);
  const invitations = manager ? (await listInvitations(db, team.id, 200, 0)).rows : [];
  return renderPage(
    reply,
    'teams/views/team',
    {
      title: team.name,
      team,
      base: access.base,
      manager,
      webhooks: manager && ctx.config.webhooksEnabled,
      roles: ROLES,
      members: members.rows.map((member) => ({
        id: member.id,
        name: personName(member),
        email: member.email,
        role: member.role,
        joined: dayUtc(member.joined_at),
        self: member.id === user.id,
      })),
      memberCount: members.count,
      previousPage: page > 1 ? page - 1 : null,
      nextPage: page * MEMBERS_PER_PAGE < members.count ? page + 1 : null,
      invitations: invitations.map((invitation) => ({
        ...invitation,
        sent: minuteUtc(invitation.created_at),
        expires: minuteUtc(invitation.expires_at),
      })),
      invite: extra.invite ?? { email: '', role: 'member', message: '' },
      error: extra.error ?? null,
    },
    { status: extra.status ?? 200 },
  );
}

export function registerTeamPage(pages: FastifyInstance, ctx: AppContext) {
  pages.get('/teams/:team_id/', async (request, reply) => {
    const access = await memberTeam(ctx.db.kysely, request);
    const raw = (request.query as Record<string, unknown>).page;
    const page = typeof raw === 'string' && /^[1-9]\d{0,5}$/.test(raw) ? Number(raw) : 1;
    return showTeamPage(reply, ctx, access, { page });
  });
}
