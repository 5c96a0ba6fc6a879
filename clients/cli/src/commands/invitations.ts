// invitations list|create|revoke.
import type { Invitation } from 'svc-client';
import { str, type Command, type Context } from '../command.ts';
import { UsageError } from '../failures.ts';
import { printJson, printRecord, printTable } from '../io.ts';
import { teamId } from '../teams-lookup.ts';

function showInvitation(ctx: Context, invitation: Invitation) {
  if (ctx.json) return printJson(ctx.io, invitation);
  printRecord(ctx.io, [
    ['id', invitation.id],
    ['email', invitation.email],
    ['role', invitation.role],
    ['status', invitation.status],
    ['expires', invitation.expires_at],
  ]);
}

export const invitationCommands: Command[] = [
  {
    path: ['invitations', 'list'],
    usage: 'TEAM',
    summary: 'The invitations of a team (owner or admin)',
    args: { min: 1, max: 1 },
    async run(ctx, args) {
      const { client } = ctx.session();
      const team_id = await teamId(client, args.positionals[0]);
      const invitations: Invitation[] = [];
      for await (const invitation of client.paginate('/api/v1/teams/{team_id}/invitations/', {
        params: { path: { team_id } },
      }))
        invitations.push(invitation);
      if (ctx.json) return printJson(ctx.io, invitations);
      printTable(
        ctx.io,
        ['ID', 'EMAIL', 'ROLE', 'STATUS', 'EXPIRES'],
        invitations.map((i) => [i.id, i.email, i.role, i.status, i.expires_at]),
      );
    },
  },
  {
    path: ['invitations', 'create'],
    usage: 'TEAM EMAIL [--role admin|member] [--message TEXT]',
    summary: 'Invite someone by e-mail (owner or admin); the service sends the e-mail',
    options: {
      role: { type: 'string', help: 'admin or member (default member)' },
      message: { type: 'string', help: 'a TEXT shown in the e-mail' },
    },
    args: { min: 2, max: 2 },
    async run(ctx, args) {
      const role = str(args, 'role') ?? 'member';
      if (role !== 'admin' && role !== 'member') throw new UsageError(`--role must be admin or member, not "${role}"`);
      const message = str(args, 'message');
      const { client } = ctx.session();
      const team_id = await teamId(client, args.positionals[0]);
      const invitation = await client.POST('/api/v1/teams/{team_id}/invitations/', {
        params: { path: { team_id } },
        body: { email: args.positionals[1], role, ...(message !== undefined ? { message } : {}) },
      });
      showInvitation(ctx, invitation);
    },
  },
  {
    path: ['invitations', 'revoke'],
    usage: 'TEAM INVITATION',
    summary: 'Revoke a pending invitation (INVITATION: its id)',
    args: { min: 2, max: 2 },
    async run(ctx, args) {
      const { client } = ctx.session();
      const team_id = await teamId(client, args.positionals[0]);
      await client.DELETE('/api/v1/teams/{team_id}/invitations/{id}/', {
        params: { path: { team_id, id: args.positionals[1] } },
      });
      ctx.io.err(`Revoked invitation ${args.positionals[1]}.`);
    },
  },
];
