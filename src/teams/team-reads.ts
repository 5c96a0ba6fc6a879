// Reads of teams and memberships: who belongs where, and the team and member lists. Re-exported by
// teams.ts, the folder's service module.
import type { Executor } from '../db/schema.ts';
import { isUuid } from '../util/uuid.ts';

/** A user's memberships of active teams: one range of memberships_user_teams_idx (migration 0016). */
const activeMembershipsOf = (db: Executor, userId: number) =>
  db.selectFrom('memberships').where('user_id', '=', userId).where('team_active', '=', 1);

/**
 * One page of the active teams a user belongs to, in name order, with the user's role in each.
 *
 * The page is cut from memberships_user_teams_idx alone: a membership row carries its team's name and
 * state, copied there by the database (migration 0016), so the order, the filter and the offset need
 * no team. Only the page's teams are then read by key, for their slug. Reading every one of the user's
 * teams to sort them cost a key probe per team, and a probe costs more the more teams all tenants have.
 */
export function userTeamsPage(db: Executor, userId: number, limit: number, offset = 0) {
  const page = activeMembershipsOf(db, userId)
    .select(['team_id', 'team_name', 'role'])
    .orderBy('team_name')
    .orderBy('team_id')
    .limit(limit)
    .offset(offset)
    .as('p');
  return db
    .selectFrom(page)
    .innerJoin('teams as t', 't.id', 'p.team_id')
    .select(['t.id', 't.name', 't.slug', 'p.role'])
    .orderBy('p.team_name')
    .orderBy('p.team_id');
}

/** Ids of the active teams a user belongs to (user-level events go to each of them), from the index alone. */
export async function activeTeamIdsOfUser(db: Executor, userId: number): Promise<string[]> {
  const rows = await activeMembershipsOf(db, userId).select('team_id').orderBy('team_id').execute();
  return rows.map((row) => row.team_id);
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

export async function listTeamsOfUser(db: Executor, userId: number, limit: number, offset: number) {
  const [{ count }, rows] = await Promise.all([
    activeMembershipsOf(db, userId)
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .executeTakeFirstOrThrow(),
    userTeamsPage(db, userId, limit, offset).execute(),
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
