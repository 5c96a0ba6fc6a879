// Who may open a team's webhook pages: owners and admins, while webhooks are enabled. A non-member
// gets the 404 page, a member the 403 page with the reason, as the API answers.
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../app-context.ts';
import { HttpProblem } from '../http/problem.ts';
import { isManager, memberTeam, type TeamPageContext } from '../teams/page-access.ts';
import { isUuid } from '../util/uuid.ts';
import { findSubscription, type SubscriptionRow } from './subscriptions.ts';

export const MANAGERS_ONLY = 'Only owners and admins of the team can manage its webhooks.';

export interface WebhookPageContext extends TeamPageContext {
  /** The team's webhook list page. */
  webhooks: string;
}

export async function webhookTeam(ctx: AppContext, request: FastifyRequest): Promise<WebhookPageContext> {
  if (!ctx.config.webhooksEnabled) throw new HttpProblem(404, 'Webhooks are not enabled on this service.');
  const access = await memberTeam(ctx.db.kysely, request);
  if (!isManager(access.team.role)) throw new HttpProblem(403, MANAGERS_ONLY);
  return { ...access, webhooks: `${access.base}webhooks/` };
}

export interface SubscriptionPageContext extends WebhookPageContext {
  row: SubscriptionRow;
  /** The subscription's page. */
  path: string;
}

/** The team and the subscription from the `id` path parameter; 404 unless it is the team's. */
export async function webhookSubscription(ctx: AppContext, request: FastifyRequest): Promise<SubscriptionPageContext> {
  const access = await webhookTeam(ctx, request);
  const { id } = request.params as { id: string };
  const row = isUuid(id) ? await findSubscription(ctx.db.kysely, access.team.id, id) : undefined;
  if (!row) throw new HttpProblem(404, 'This team has no webhook with that id.');
  return { ...access, row, path: `${access.webhooks}${row.id}/` };
}
