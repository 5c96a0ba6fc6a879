// What the dashboard lists about a user's teams: each active team with the user's role and its
// member count, in one query (the count is a correlated subquery on the memberships' team index; how
// the teams and the role are read: team-reads.ts, userTeamsPage).
import type { Db } from '../db/connection.ts';
import { userTeamsPage } from './team-reads.ts';
import type { Role } from './teams.ts';

export interface TeamOverview {
  id: string;
  name: string;
  slug: string;
  role: Role;
  member_count: number;
}

/** The user's active teams by name, at most `limit` of them. */
export async function teamsOverview(db: Db, userId: number, limit = 200): Promise<TeamOverview[]> {
  const rows = await userTeamsPage(db.kysely, userId, limit)
    .select((eb) =>
      eb
        .selectFrom('memberships as all_members')
        .select((inner) => inner.fn.countAll<number>().as('n'))
        .whereRef('all_members.team_id', '=', 't.id')
        .as('member_count'),
    )
    .execute();
  return rows.map((row) => ({ ...row, member_count: Number(row.member_count ?? 0) }));
}
