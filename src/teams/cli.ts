import type { AppContext } from '../app-context.ts';
import { cliActor } from '../audit/actor.ts';
import { findUserByEmail } from '../accounts/users.ts';
import { UsageError, optional, required, type Command } from '../cli/framework.ts';
import { NotFoundError } from '../util/domain-errors.ts';
import { ROLES, SLUG, addMember, createTeam, findTeamByIdOrSlug, setTeamActive, type Role } from './teams.ts';

async function userIdFor(ctx: AppContext, email: string): Promise<number> {
  const user = await findUserByEmail(ctx.db.kysely, email);
  if (!user) throw new NotFoundError(`no user with e-mail ${email}`);
  return user.id;
}

async function teamFor(ctx: AppContext, idOrSlug: string) {
  const team = await findTeamByIdOrSlug(ctx.db.kysely, idOrSlug);
  if (!team) throw new NotFoundError(`no team with id or slug "${idOrSlug}"`);
  return team;
}

const teamCreate: Command = {
  path: ['team', 'create'],
  usage: 'svc team create --name N [--slug S] --owner EMAIL',
  summary: "Creates a team owned by the user with e-mail EMAIL and prints the team's UUID.",
  options: { name: { type: 'string' }, slug: { type: 'string' }, owner: { type: 'string' } },
  async run(values, { open }, io) {
    const name = required(values, 'name');
    const owner = required(values, 'owner');
    const slug = optional(values, 'slug');
    if (slug !== undefined && !SLUG.test(slug))
      throw new UsageError('--slug must be lowercase letters, digits and inner hyphens (at most 50)');
    if (name.trim().length > 100) throw new UsageError('--name must be at most 100 characters');
    const ctx = await open();
    const ownerId = await userIdFor(ctx, owner);
    const team = await createTeam(ctx.db.kysely, { name, slug, ownerId }, cliActor('team create'));
    io.out(team.id);
  },
};

const teamAddMember: Command = {
  path: ['team', 'add-member'],
  usage: 'svc team add-member --team ID_OR_SLUG --email E --role owner|admin|member',
  summary: 'Adds a user to a team with a role (emits team.member.added).',
  options: { team: { type: 'string' }, email: { type: 'string' }, role: { type: 'string' } },
  async run(values, { open }, io) {
    const teamRef = required(values, 'team');
    const email = required(values, 'email');
    const role = required(values, 'role') as Role;
    if (!ROLES.includes(role)) throw new UsageError('--role must be owner, admin or member');
    const ctx = await open();
    const team = await teamFor(ctx, teamRef);
    const userId = await userIdFor(ctx, email);
    // A direct add is a join like an accepted invitation: it emits team.member.added.
    await addMember(ctx.db.kysely, team.id, userId, role, cliActor('team add-member'), ctx);
    io.out(`${email} added to ${team.slug} as ${role}`);
  },
};

function activation(active: boolean): Command {
  const verb = active ? 'activate' : 'deactivate';
  return {
    path: ['team', verb],
    usage: `svc team ${verb} --team ID_OR_SLUG`,
    summary: active
      ? 'Makes a deactivated team visible in the API again.'
      : 'Deactivates a team: it disappears from the API and receives no webhooks.',
    options: { team: { type: 'string' } },
    async run(values, { open }, io) {
      const teamRef = required(values, 'team');
      const ctx = await open();
      const team = await teamFor(ctx, teamRef);
      await setTeamActive(ctx.db.kysely, team.id, active, cliActor(`team ${verb}`));
      io.out(`${team.slug} ${verb}d`);
    },
  };
}

export const teamCommands: Command[] = [teamCreate, teamAddMember, activation(false), activation(true)];
