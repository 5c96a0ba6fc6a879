// Reads of teams and memberships: who belongs where, and the team and member lists. Re-exported by
// teams.ts, the folder's service module.
import { sql } from 'kysely';
import type { DialectName } from '../db/connection.ts';
import type { Executor } from '../db/schema.ts';
import { isUuid } from '../util/uuid.ts';

/**
 * PostgreSQL: `t` restricted to the keys of the user's teams, an array computed once. Joined to the
 * memberships alone, the planner hashes the whole teams table whenever that looks cheaper than one key
 * probe per membership (for a user in 200 teams, up to some 50,000 teams in all), and one user's list
 * would cost in proportion to every tenant's teams. It cannot price an array it has not computed yet,
 * so it probes the key. SQLite's planner probes the key anyway.
 */
export const userTeamKeys = (userId: number) =>
  sql<boolean>`"t"."id" = any(array(select "team_id" from "memberships" where "user_id" = ${userId}))`;

/** Ids of the active teams a user belongs to (user-level events go to each of them). */
export async function activeTeamIdsOfUser(db: Executor, dialect: DialectName, userId: number): Promise<string[]> {
  const rows = await db
    .selectFrom('memberships as m')
    .innerJoin('teams as t', 't.id', 'm.team_id')
    .select('t.id')
    .where('m.user_id', '=', userId)
    .where('t.is_active', '=', 1)
    .$if(dialect === 'postgres', (q) => q.where(userTeamKeys(userId)))
    .orderBy('t.id')
    .execute();
  return rows.map((row) => row.id);
}

/** The caller's view of an active team they belong to, or undefined (unknown, inactive, not a member). */
export async function teamForMember(db: Executor, teamId: string, userId: number) {
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

export async function listTeamsOfUser(
  db: Executor,
  dialect: DialectName,
  userId: number,
  limit: number,
  offset: number,
) {
  const base = db
    .selectFrom('teams as t')
    .innerJoin('memberships as m', 'm.team_id', 't.id')
    .where('m.user_id', '=', userId)
    .where('t.is_active', '=', 1)
    .$if(dialect === 'postgres', (q) => q.where(userTeamKeys(userId)));
  const [{ count }, rows] = await Promise.all([
    base.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow(),
    base
      .select(['t.id', 't.name', 't.slug', 'm.role'])
      .orderBy('t.name')
      .orderBy('t.id')
      .limit(limit)
      .offset(offset)
      .execute(),
  ]);
  return { count: Number(count), rows };
}

/**
 * A team's members for cursor pagination (http/cursor.ts orders and limits it: newest joiner first,
 * along memberships_team_joined_idx backwards, so every page costs the same).
 */
export function membersQuery(db: Executor, teamId: string) {
  return db
    .selectFrom('memberships as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .select(['u.id', 'u.email', 'u.first_name', 'u.last_name', 'u.display_name', 'm.role', 'm.joined_at'])
    .where('m.team_id', '=', teamId);
}

/**
 * One page of a team's members, in joining order. The page comes from memberships_team_joined_idx
 * alone (it holds every column the page needs: the offset skips index entries, no row is read for
 * them), and only the page's users are then read: a page costs its own rows plus the entries it
 * skips, however many other teams and users there are. The count reads the team's index entries
 * (every membership has its user: the foreign key cascades).
 */
export async function listMembers(db: Executor, teamId: string, limit: number, offset: number) {
  const page = db
    .selectFrom('memberships')
    .select(['user_id', 'role', 'joined_at'])
    .where('team_id', '=', teamId)
    .orderBy('joined_at')
    .orderBy('user_id')
    .limit(limit)
    .offset(offset)
    .as('p');
  const [{ count }, rows] = await Promise.all([
    db
      .selectFrom('memberships')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('team_id', '=', teamId)
      .executeTakeFirstOrThrow(),
    db
      .selectFrom(page)
      .innerJoin('users as u', 'u.id', 'p.user_id')
      .select(['u.id', 'u.email', 'u.first_name', 'u.last_name', 'u.display_name', 'p.role', 'p.joined_at'])
      .orderBy('p.joined_at')
      .orderBy('p.user_id')
      .execute(),
  ]);
  return { count: Number(count), rows };
}
