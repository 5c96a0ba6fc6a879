// teams list|create|show|rename and members list|set-role|remove.
import type { Member, Team } from 'svc-client';
import { str, type Command, type Context } from '../command.ts';
import { UsageError } from '../failures.ts';
import { printJson, printRecord, printTable } from '../io.ts';
import { BY_CURSOR, memberId, teamId } from '../teams-lookup.ts';

const ROLES = ['owner', 'admin', 'member'] as const;

function showTeam(ctx: Context, team: Team) {
  if (ctx.json) return printJson(ctx.io, team);
  printRecord(ctx.io, [
    ['id', team.id],
    ['name', team.name],
    ['slug', team.slug],
    ['role', team.role],
    ['created', team.created_at],
    ['updated', team.updated_at],
  ]);
}

function showMember(ctx: Context, member: Member) {
  if (ctx.json) return printJson(ctx.io, member);
  printRecord(ctx.io, [
    ['id', member.id],
    ['email', member.email],
    ['name', member.display_name || [member.first_name, member.last_name].filter(Boolean).join(' ')],
    ['role', member.role],
    ['joined', member.joined_at],
  ]);
}

export const teamCommands: Command[] = [
  {
    path: ['teams', 'list'],
    usage: '',
    summary: 'The teams you belong to',
    args: { min: 0, max: 0 },
    async run(ctx) {
      const teams: Team[] = [];
      for await (const team of ctx.session().client.paginate('/api/v1/teams/')) teams.push(team as Team);
      if (ctx.json) return printJson(ctx.io, teams);
      printTable(
        ctx.io,
        ['ID', 'NAME', 'SLUG', 'ROLE'],
        teams.map((t) => [t.id, t.name, t.slug, t.role]),
      );
    },
  },
  {
    path: ['teams', 'create'],
    usage: 'NAME [--slug SLUG]',
    summary: 'Create a team; you become its owner',
    options: { slug: { type: 'string', help: 'the SLUG (default: derived from the name)' } },
    args: { min: 1, max: 1 },
    async run(ctx, args) {
      const slug = str(args, 'slug');
      const team = await ctx
        .session()
        .client.POST('/api/v1/teams/', { body: { name: args.positionals[0], ...(slug ? { slug } : {}) } });
      showTeam(ctx, team);
    },
  },
  {
    path: ['teams', 'show'],
    usage: 'TEAM',
    summary: 'One team (TEAM: its id or slug)',
    args: { min: 1, max: 1 },
    async run(ctx, args) {
      const { client } = ctx.session();
      showTeam(
        ctx,
        await client.GET('/api/v1/teams/{id}/', {
          params: { path: { id: await teamId(client, args.positionals[0]) } },
        }),
      );
    },
  },
  {
    path: ['teams', 'rename'],
    usage: 'TEAM NAME [--slug SLUG]',
    summary: 'Rename a team, and change its slug with --slug (owner or admin)',
    options: { slug: { type: 'string', help: 'a new SLUG' } },
    args: { min: 2, max: 2 },
    async run(ctx, args) {
      const { client } = ctx.session();
      const id = await teamId(client, args.positionals[0]);
      const slug = str(args, 'slug');
      showTeam(
        ctx,
        await client.PATCH('/api/v1/teams/{id}/', {
          params: { path: { id } },
          body: { name: args.positionals[1], ...(slug ? { slug } : {}) },
        }),
      );
    },
  },
  {
    path: ['members', 'list'],
    usage: 'TEAM',
    summary: 'The members of a team, in joining order',
    args: { min: 1, max: 1 },
    async run(ctx, args) {
      const { client } = ctx.session();
      const id = await teamId(client, args.positionals[0]);
      // By cursor (any number of members; page-number pages stop at 10,000 items), newest first: reversed.
      const members: Member[] = [];
      for await (const member of client.paginate('/api/v1/teams/{id}/members/', {
        params: { path: { id }, query: BY_CURSOR },
      }))
        members.push(member);
      members.reverse();
      if (ctx.json) return printJson(ctx.io, members);
      printTable(
        ctx.io,
        ['ID', 'EMAIL', 'NAME', 'ROLE', 'JOINED'],
        members.map((m) => [
          m.id,
          m.email,
          m.display_name || [m.first_name, m.last_name].filter(Boolean).join(' '),
          m.role,
          m.joined_at,
        ]),
      );
    },
  },
  {
    path: ['members', 'set-role'],
    usage: 'TEAM USER owner|admin|member',
    summary: "Change a member's role (USER: a user id or an e-mail address)",
    args: { min: 3, max: 3 },
    async run(ctx, args) {
      const [teamRef, userRef, role] = args.positionals;
      if (!(ROLES as readonly string[]).includes(role))
        throw new UsageError(`the role must be owner, admin or member, not "${role}"`);
      const { client } = ctx.session();
      const id = await teamId(client, teamRef);
      const user_id = await memberId(client, id, userRef);
      showMember(
        ctx,
        await client.PATCH('/api/v1/teams/{id}/members/{user_id}/', {
          params: { path: { id, user_id } },
          body: { role: role as (typeof ROLES)[number] },
        }),
      );
    },
  },
  {
    path: ['members', 'remove'],
    usage: 'TEAM USER',
    summary: 'Remove a member from a team (or yourself: leave it)',
    args: { min: 2, max: 2 },
    async run(ctx, args) {
      const { client } = ctx.session();
      const id = await teamId(client, args.positionals[0]);
      const user_id = await memberId(client, id, args.positionals[1]);
      await client.DELETE('/api/v1/teams/{id}/members/{user_id}/', { params: { path: { id, user_id } } });
      ctx.io.err(`Removed member ${args.positionals[1]}.`);
    },
  },
];
