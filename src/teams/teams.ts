// Teams and memberships: the tenant scope. Other folders call these functions, never the tables.
import { randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { AppContext } from '../app-context.ts';
import type { Actor } from '../audit/actor.ts';
import { changedFields, recordAudit } from '../audit/record.ts';
import type { Database, Executor, Row } from '../db/schema.ts';
import { ConflictError, NotFoundError, ValidationError } from '../util/domain-errors.ts';
import { nowIso } from '../util/time.ts';
import { isUuid } from '../util/uuid.ts';
import { isUniqueViolation } from './db-errors.ts';

// The reads other folders use with these functions (the membership and list queries).
export { activeTeamIdsOfUser, listMembers, listTeamsOfUser, membersQuery, teamForMember } from './team-reads.ts';

export type Role = 'owner' | 'admin' | 'member';
export const ROLES: readonly Role[] = ['owner', 'admin', 'member'];

export const SLUG = /^[a-z0-9](?:[a-z0-9-]{0,48}[a-z0-9])?$/;
export const NAME_MAX = 100;

export function slugify(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 50)
    .replace(/-+$/, '');
  return slug || 'team';
}

async function slugTaken(db: Executor, slug: string): Promise<boolean> {
  return Boolean(await db.selectFrom('teams').select('id').where('slug', '=', slug).executeTakeFirst());
}

/** A free slug derived from the name: `acme`, then `acme-2`, `acme-3`, … */
export async function freeSlugFor(db: Executor, name: string): Promise<string> {
  const base = slugify(name);
  if (!(await slugTaken(db, base))) return base;
  for (let n = 2; ; n++) {
    const candidate = `${base.slice(0, 45)}-${n}`;
    if (!(await slugTaken(db, candidate))) return candidate;
  }
}

export type TeamRow = Row<'teams'>;

/** Creates a team with its first owner in one transaction. An explicit slug that is taken → ConflictError. */
export async function createTeam(
  db: Kysely<Database>,
  input: { name: string; slug?: string; ownerId: number },
  actor: Actor,
): Promise<TeamRow> {
  const name = input.name.trim();
  if (!name || name.length > NAME_MAX) throw new ValidationError(NAME_RULE);
  if (input.slug !== undefined && !SLUG.test(input.slug)) throw new ValidationError(SLUG_RULE);
  // The slug check gives the friendly answer; the unique index settles a race between two creators.
  // A derived slug that lost such a race is derived again (the loser gets `acme-2`).
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction().execute(async (trx) => {
        if (input.slug !== undefined && (await slugTaken(trx, input.slug))) throw slugTakenError(input.slug);
        const now = nowIso();
        const team: TeamRow = {
          id: randomUUID(),
          name,
          slug: input.slug ?? (await freeSlugFor(trx, name)),
          is_active: 1,
          created_at: now,
          updated_at: now,
        };
        await trx.insertInto('teams').values(team).execute();
        // The creator's membership emits no team.member.added: nobody else joined, and no webhook
        // subscription can exist on a team that did not exist a moment ago (docs/teams.md).
        await trx
          .insertInto('memberships')
          .values({ team_id: team.id, user_id: input.ownerId, role: 'owner', joined_at: now })
          .execute();
        await recordAudit(trx, actor, {
          teamId: team.id,
          action: 'team.created',
          targetId: team.id,
          data: { name: team.name, slug: team.slug, owner_id: input.ownerId },
        });
        return team;
      });
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      if (input.slug !== undefined) throw slugTakenError(input.slug);
      if (attempt >= 3) throw error;
    }
  }
}

const NAME_RULE = `A team name is 1 to ${NAME_MAX} characters.`;
const SLUG_RULE = 'A slug is 1 to 50 lowercase letters, digits and inner hyphens.';
const slugTakenError = (slug: string) => new ConflictError(`The slug "${slug}" is already taken.`);

/** Renames a team and/or changes its slug; a slug taken by another team → ConflictError. */
export async function updateTeam(
  db: Kysely<Database>,
  teamId: string,
  input: { name?: string; slug?: string },
  actor: Actor,
): Promise<void> {
  const changes: { name?: string; slug?: string } = {};
  if (input.name !== undefined) {
    const name = input.name.trim();
    if (!name || name.length > NAME_MAX) throw new ValidationError(NAME_RULE);
    changes.name = name;
  }
  if (input.slug !== undefined) {
    if (!SLUG.test(input.slug)) throw new ValidationError(SLUG_RULE);
    changes.slug = input.slug;
  }
  if (Object.keys(changes).length === 0) return;
  try {
    await db.transaction().execute(async (trx) => {
      if (changes.slug !== undefined) {
        const holder = await trx.selectFrom('teams').select('id').where('slug', '=', changes.slug).executeTakeFirst();
        if (holder && holder.id !== teamId) throw slugTakenError(changes.slug);
      }
      const before = await trx
        .selectFrom('teams')
        .select(['name', 'slug'])
        .where('id', '=', teamId)
        .executeTakeFirstOrThrow();
      await trx
        .updateTable('teams')
        .set({ ...changes, updated_at: nowIso() })
        .where('id', '=', teamId)
        .execute();
      const changed = changedFields(before, changes);
      if (Object.keys(changed).length > 0)
        await recordAudit(trx, actor, { teamId, action: 'team.updated', targetId: teamId, data: changed });
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw slugTakenError(changes.slug ?? '');
    throw error;
  }
}

export async function findTeamByIdOrSlug(db: Executor, idOrSlug: string): Promise<TeamRow | undefined> {
  const column = isUuid(idOrSlug) ? 'id' : 'slug';
  return db
    .selectFrom('teams')
    .selectAll()
    .where(column, '=', isUuid(idOrSlug) ? idOrSlug.toLowerCase() : idOrSlug)
    .executeTakeFirst();
}

/** Deactivates or reactivates a team; a team already in that state is left as it is (and nothing is recorded). */
export async function setTeamActive(
  db: Kysely<Database>,
  teamId: string,
  active: boolean,
  actor: Actor,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const updated = await trx
      .updateTable('teams')
      .set({ is_active: active ? 1 : 0, updated_at: nowIso() })
      .where('id', '=', teamId)
      .where('is_active', '=', active ? 0 : 1)
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) === 0) return;
    const data = { is_active: { before: !active, after: active } };
    await recordAudit(trx, actor, {
      teamId,
      action: active ? 'team.reactivated' : 'team.deactivated',
      targetId: teamId,
      data,
    });
  });
}

/** What emitting an event needs from the application context. */
export type EventContext = Pick<AppContext, 'events'>;

/**
 * Makes a user a member inside the caller's transaction and emits `team.member.added` there too
 * (unless `ctx` is null: fixtures only).
 * Race-safe: the unique (team, user) constraint decides, not a prior read; returns false when the
 * user already was a member (nothing written, no event).
 */
export async function joinTeam(
  ctx: EventContext | null,
  trx: Transaction<Database>,
  teamId: string,
  user: { id: number; email: string },
  role: Role,
  actor: Actor,
): Promise<boolean> {
  const inserted = await trx
    .insertInto('memberships')
    .values({ team_id: teamId, user_id: user.id, role, joined_at: nowIso() })
    .onConflict((oc) => oc.columns(['team_id', 'user_id']).doNothing())
    .returning('id')
    .executeTakeFirst();
  if (!inserted) return false;
  if (ctx)
    await ctx.events.emit(trx, {
      type: 'team.member.added',
      teamId,
      data: { user_id: user.id, email: user.email, role },
    });
  await recordAudit(trx, actor, {
    teamId,
    action: 'team.member.added',
    targetId: user.id,
    data: { email: user.email, role },
  });
  return true;
}

/**
 * Adds a member; a user who is already a member → ConflictError. With `events` (the CLI's
 * `svc team add-member`), `team.member.added` is emitted in the same transaction; test fixtures
 * call it without.
 */
export async function addMember(
  db: Kysely<Database>,
  teamId: string,
  userId: number,
  role: Role,
  actor: Actor,
  events?: EventContext,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const user = await trx.selectFrom('users').select(['id', 'email']).where('id', '=', userId).executeTakeFirst();
    if (!user) throw new NotFoundError('No such user.');
    if (!(await joinTeam(events ?? null, trx, teamId, user, role, actor)))
      throw new ConflictError('That user is already a member of the team.');
  });
}
