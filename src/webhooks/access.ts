// Who manages a team's webhooks: its owners and admins. A member gets 403; anyone else, and an
// unknown team or subscription, 404 (no resource of another team is visible).
import type { FastifyRequest } from 'fastify';
import type { Executor } from '../db/schema.ts';
import { requireUser } from '../http/identity.ts';
import { teamForMember } from '../teams/teams.ts';
import { ForbiddenError, NotFoundError } from '../util/domain-errors.ts';
import { isUuid } from '../util/uuid.ts';
import { findSubscription, type SubscriptionRow } from './subscriptions.ts';

/** The team, when the caller is its owner or admin. */
export async function managedTeam(db: Executor, request: FastifyRequest, teamId: string) {
  const team = await teamForMember(db, teamId, requireUser(request).user.id);
  if (!team) throw new NotFoundError();
  if (team.role !== 'owner' && team.role !== 'admin')
    throw new ForbiddenError('Only owners and admins of the team can manage its webhooks.');
  return team;
}

/** A subscription of a team the caller manages. */
export async function managedSubscription(
  db: Executor,
  request: FastifyRequest,
  params: { team_id: string; id: string },
): Promise<SubscriptionRow> {
  const team = await managedTeam(db, request, params.team_id);
  if (!isUuid(params.id)) throw new NotFoundError();
  const row = await findSubscription(db, team.id, params.id);
  if (!row) throw new NotFoundError();
  return row;
}
