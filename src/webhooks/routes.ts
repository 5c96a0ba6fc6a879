// Webhook subscriptions API: /api/v1/teams/{team_id}/webhooks/… Owner or admin of the team only
// (a member gets 403, a non-member 404); reads need read:webhooks, write:webhooks or
// webhooks:manage, changes need write:webhooks or webhooks:manage.
import type { AppContext, TypedApp } from '../app-context.ts';
import { warnIfGuardRelaxed } from './log.ts';
import { registerDeliveryLogRoutes } from './log-routes.ts';
import { LogEntry, Subscription, SubscriptionWithSecret } from './schemas.ts';
import { AddressGuard } from './ssrf.ts';
import { registerSubscriptionRoutes } from './subscription-routes.ts';

export function registerWebhookRoutes(app: TypedApp, ctx: AppContext) {
  warnIfGuardRelaxed(ctx);
  app.addSchema(Subscription);
  app.addSchema(SubscriptionWithSecret);
  app.addSchema(LogEntry);
  const base = '/api/v1/teams/:team_id/webhooks/';
  registerSubscriptionRoutes(app, ctx, new AddressGuard(ctx.config.webhooks), base);
  registerDeliveryLogRoutes(app, ctx, base);
}
