// Reads of teams and memberships: who belongs where, and the team and member lists. Re-exported by
// teams.ts, the folder's service module.
import { sql, type ExpressionBuilder } from 'kysely';
import type { DialectName } from '../db/connection.ts';
import type { Database, Executor } from '../db/schema.ts';
import { isUuid } from '../util/uuid.ts';

/**
 * The active teams a user belongs to, as `t`, read by their keys. Joined to the memberships instead,
 * PostgreSQL's planner chooses by its statistics: from a few hundred teams to some 50,000 in all it
 * hashes the whole teams table (cheaper, by its prices, than one key probe per membership), so one
 * user's list would cost in proportion to every tenant's teams; at a million, it expected the user to
 * be in one team. On PostgreSQL the keys are an array computed once, which the planner cannot price
 * before it has it, so it probes the key for each; SQLite's planner probes the key for `in (…)` anyway.
 * A team's row is read once, and the user's role in it by its own key (`roleIn`).
 */
export function userTeams(db: Executor, dialect: DialectName, userId: number) {
  return db
    .selectFrom('teams as t')
    .where('t.is_active', '=', 1)
    .where((eb) => {
      const keys = eb.selectFrom('memberships').select('team_id').where('user_id', '=', userId);
      return dialect === 'postgres' ? sql<boolean>`"t"."id" = any(array(${keys}))` : eb('t.id', 'in', keys);
    });
}

/** The user's role in team `t` of `userTeams` (a select of it). */
export function roleIn(userId: number) {
  return (eb: ExpressionBuilder<Database & { t: Database['teams'] }, 't'>) =>
    eb
      .selectFrom('memberships as m')
      .select('m.role')
      .whereRef('m.team_id', '=', 't.id')
      .where('m.user_id', '=', userId)
      .as('role');
}

/** Ids of the active teams a user belongs to (user-level events go to each of them). */
export async function activeTeamIdsOfUser(db: Executor, dialect: DialectName, userId: number): Promise<string[]> {
  const rows = await userTeams(db, dialect, userId).select('t.id').orderBy('t.id').execute();
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
  const base = userTeams(db, dialect, userId);
  const [{ count }, rows] = await Promise.all([
    base.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow(),
    base
      .select(['t.id', 't.name', 't.slug'])
      .select(roleIn(userId))
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
