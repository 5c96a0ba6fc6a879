// Teams and memberships: the tenant scope. Other folders call these functions, never the tables.
import { randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/schema.ts';
import { nowIso } from '../util/time.ts';

export type Role = 'owner' | 'admin' | 'member';
export const ROLES: readonly Role[] = ['owner', 'admin', 'member'];

export class TeamError extends Error {
  readonly code: 'slug_taken' | 'invalid' | 'not_found' | 'already_member';
  constructor(code: TeamError['code'], message: string) {
    super(message);
    this.code = code;
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (value: string) => UUID.test(value);
export const SLUG = /^[a-z0-9](?:[a-z0-9-]{0,48}[a-z0-9])?$/;

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

type Db = Kysely<Database> | Transaction<Database>;

async function slugTaken(db: Db, slug: string): Promise<boolean> {
  return Boolean(await db.selectFrom('teams').select('id').where('slug', '=', slug).executeTakeFirst());
}

/** A free slug derived from the name: `acme`, then `acme-2`, `acme-3`, … */
export async function freeSlugFor(db: Db, name: string): Promise<string> {
  const base = slugify(name);
  if (!(await slugTaken(db, base))) return base;
  for (let n = 2; ; n++) {
    const candidate = `${base.slice(0, 45)}-${n}`;
    if (!(await slugTaken(db, candidate))) return candidate;
  }
}

export interface TeamRow {
  id: string;
  name: string;
  slug: string;
  is_active: number;
  created_at: string;
  updated_at: string;
}

/** Creates a team with its first owner in one transaction. An explicit slug that is taken → slug_taken. */
export async function createTeam(db: Kysely<Database>, input: { name: string; slug?: string; ownerId: number }): Promise<TeamRow> {
  const name = input.name.trim();
  if (!name || name.length > 100) throw new TeamError('invalid', 'A team name is 1 to 100 characters.');
  if (input.slug !== undefined && !SLUG.test(input.slug)) {
    throw new TeamError('invalid', 'A slug is 1 to 50 lowercase letters, digits and inner hyphens.');
  }
  return db.transaction().execute(async (trx) => {
    if (input.slug !== undefined && (await slugTaken(trx, input.slug))) {
      throw new TeamError('slug_taken', `The slug "${input.slug}" is already taken.`);
    }
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
    await trx.insertInto('memberships').values({ team_id: team.id, user_id: input.ownerId, role: 'owner', joined_at: now }).execute();
    return team;
  });
}

export async function findTeamByIdOrSlug(db: Db, idOrSlug: string): Promise<TeamRow | undefined> {
  const column = isUuid(idOrSlug) ? 'id' : 'slug';
  return db.selectFrom('teams').selectAll().where(column, '=', isUuid(idOrSlug) ? idOrSlug.toLowerCase() : idOrSlug).executeTakeFirst();
}

export async function setTeamActive(db: Db, teamId: string, active: boolean): Promise<void> {
  await db.updateTable('teams').set({ is_active: active ? 1 : 0, updated_at: nowIso() }).where('id', '=', teamId).execute();
}

/** Adds a member; a user who is already a member → already_member. */
export async function addMember(db: Db, teamId: string, userId: number, role: Role): Promise<void> {
  const existing = await db
    .selectFrom('memberships')
    .select('id')
    .where('team_id', '=', teamId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  if (existing) throw new TeamError('already_member', 'That user is already a member of the team.');
  await db.insertInto('memberships').values({ team_id: teamId, user_id: userId, role, joined_at: nowIso() }).execute();
}

/** The caller's view of an active team they belong to, or undefined (unknown, inactive, not a member). */
export async function teamForMember(db: Db, teamId: string, userId: number) {
  if (!isUuid(teamId)) return undefined;
  return db
    .selectFrom('teams as t')
    .innerJoin('memberships as m', 'm.team_id', 't.id')
    .select(['t.id', 't.name', 't.slug', 't.created_at', 't.updated_at', 'm.role'])
    .where('t.id', '=', teamId.toLowerCase())
    .where('t.is_active', '=', 1)
    .where('m.user_id', '=', userId)
    .executeTakeFirst();
}

export async function listTeamsOfUser(db: Db, userId: number, limit: number, offset: number) {
  const base = db
    .selectFrom('teams as t')
    .innerJoin('memberships as m', 'm.team_id', 't.id')
    .where('m.user_id', '=', userId)
    .where('t.is_active', '=', 1);
  const [{ count }, rows] = await Promise.all([
    base.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow(),
    base.select(['t.id', 't.name', 't.slug', 'm.role']).orderBy('t.name').orderBy('t.id').limit(limit).offset(offset).execute(),
  ]);
  return { count: Number(count), rows };
}

export async function listMembers(db: Db, teamId: string, limit: number, offset: number) {
  const base = db.selectFrom('memberships as m').innerJoin('users as u', 'u.id', 'm.user_id').where('m.team_id', '=', teamId);
  const [{ count }, rows] = await Promise.all([
    base.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow(),
    base
      .select(['u.id', 'u.email', 'u.first_name', 'u.last_name', 'u.display_name', 'm.role', 'm.joined_at'])
      .orderBy('m.joined_at')
      .orderBy('u.id')
      .limit(limit)
      .offset(offset)
      .execute(),
  ]);
  return { count: Number(count), rows };
}
