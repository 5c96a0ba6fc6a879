// Reads of teams and memberships: who belongs where, and the team and member lists. Re-exported by
// teams.ts, the folder's service module.
import { sql } from 'kysely';
import type { DialectName } from '../db/connection.ts';
import type { Executor } from '../db/schema.ts';
import type { MembershipsTable } from '../db/tables/teams.ts';
import { isUuid } from '../util/uuid.ts';

const activeTeams = (db: Executor) => db.selectFrom('teams as t').where('t.is_active', '=', 1);

/**
 * The active teams a user belongs to, as `t`; `roleIn` selects the user's role in each.
 *
 * PostgreSQL reads them from their own table by key: `t.id = any(array(…))` of the user's memberships,
 * computed once, with nothing joined. Joined to the memberships, its planner chooses by statistics:
 * from a few hundred teams to some 50,000 in all it hashes the whole teams table (by its prices cheaper
 * than one key probe per membership), so one user's list costs in proportion to every tenant's teams;
 * and with the array added to the join, at a million teams, where the statistics expect a user in one
 * team, it repeated the array's probes once per membership. An array it has not computed yet it cannot
 * price, so it probes the key once per element.
 *
 * SQLite keeps the join: without statistics its planner always walks the user's memberships and probes
 * each team's key, and the membership row it reads carries the role.
 */
export function userTeams(db: Executor, dialect: DialectName, userId: number): ReturnType<typeof activeTeams> {
  if (dialect === 'postgres')
    return activeTeams(db).where(
      (eb) =>
        sql<boolean>`"t"."id" = any(array(${eb.selectFrom('memberships').select('team_id').where('user_id', '=', userId)}))`,
    );
  // `m` is read only through roleIn(), hence the narrower type.
  return activeTeams(db)
    .innerJoin('memberships as m', 'm.team_id', 't.id')
    .where('m.user_id', '=', userId) as unknown as ReturnType<typeof activeTeams>;
}

/**
 * The user's role in team `t` of `userTeams`. PostgreSQL: by its own key, which the planner evaluates
 * only for the rows a page keeps (after the sort and the limit).
 */
export function roleIn(dialect: DialectName, userId: number) {
  return (
    dialect === 'postgres'
      ? sql<
          MembershipsTable['role']
        >`(select "m"."role" from "memberships" as "m" where "m"."team_id" = "t"."id" and "m"."user_id" = ${userId})`
      : sql<MembershipsTable['role']>`"m"."role"`
  ).as('role');
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
      .select(roleIn(dialect, userId))
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
