// The webhooks capability's dashboard pages (registered by dashboard/routes.ts, which checks the
// login and CSRF for all of them): a team's list and "Create webhook", and one subscription's page
// with its delivery log and actions. One SSRF guard for all of them, as the API has.
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app-context.ts';
import { registerWebhookActions } from './pages-actions.ts';
import { registerWebhookListPage } from './pages-list.ts';
import { registerSubscriptionPage } from './pages-subscription.ts';
import { AddressGuard } from './ssrf.ts';

export function registerWebhookPages(pages: FastifyInstance, ctx: AppContext) {
  const guard = new AddressGuard(ctx.config.webhooks);
  registerWebhookListPage(pages, ctx, guard);
  registerSubscriptionPage(pages, ctx, guard);
  registerWebhookActions(pages, ctx);
}
