// Who may open a team's pages: a member sees the team, anyone else gets the 404 page (as the API
// answers 404, so a team's existence is not revealed); owner/admin pages refuse a member with a 403
// page that says why.
import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import { requireUser, type AuthUser } from '../http/identity.ts';
import { HttpProblem } from '../http/problem.ts';
import { teamForMember, type Role } from './teams.ts';

export const TEAM_NOT_FOUND = 'No team of yours has this address.';

export interface TeamPageContext {
  user: AuthUser;
  team: { id: string; name: string; slug: string; role: Role; created_at: string };
  /** The team's pages start here. */
  base: string;
}

/** The viewer and their team from the `team_id` path parameter; a 404 problem unless a member. */
export async function memberTeam(db: Kysely<Database>, request: FastifyRequest): Promise<TeamPageContext> {
  const user = requireUser(request).user;
  const { team_id: teamId } = request.params as { team_id: string };
  const team = await teamForMember(db, teamId, user.id);
  if (!team) throw new HttpProblem(404, TEAM_NOT_FOUND);
  return { user, team, base: `/teams/${team.id}/` };
}

/** A 403 problem carrying `refusal` (the policy's sentence) when there is one. */
export function refuseWith(refusal: string | null): void {
  if (refusal) throw new HttpProblem(403, refusal);
}

export const isManager = (role: Role) => role === 'owner' || role === 'admin';
