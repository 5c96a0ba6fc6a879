// The delivery log API: /api/v1/teams/{team_id}/webhooks/{id}/logs/ (read, retry a dead letter)
// and /{id}/test/ (queue a test event).
import { Type } from '@sinclair/typebox';
import type { AppContext, TypedApp } from '../app-context.ts';
import { requestActor } from '../audit/actor.ts';
import { CursorPageOf, cursorPage } from '../http/cursor.ts';
import { ProblemRef, authErrors } from '../http/schemas.ts';
import { EVENT_NAMES, isEventType } from '../events/index.ts';
import { ConflictError, NotFoundError, ValidationError } from '../util/domain-errors.ts';
import { managedSubscription } from './access.ts';
import { deliveryLog, logView } from './delivery-log.ts';
import { queueTestDelivery, restartDeadLetter } from './manual-delivery.ts';
import { LogParams, LogQuery, READ, SubscriptionParams, TAGS, TestBody, WRITE, notFoundResponse } from './schemas.ts';

/** `base` is the subscriptions collection's path, ending in a slash. */
export function registerDeliveryLogRoutes(app: TypedApp, ctx: AppContext, base: string) {
  const { db, config } = ctx;

  app.get(
    `${base}:id/logs/`,
    {
      config: { scopes: READ },
      schema: {
        operationId: 'list_webhook_deliveries',
        summary: 'Delivery log, newest attempt first, cursor-paginated (page_size 50 by default, at most 200)',
        tags: TAGS,
        params: SubscriptionParams,
        querystring: LogQuery,
        response: {
          200: CursorPageOf(Type.Ref('WebhookDeliveryLogEntry')),
          ...authErrors,
          ...notFoundResponse,
        },
      },
    },
    async (request) => {
      const row = await managedSubscription(db.kysely, request, request.params);
      const query = deliveryLog(db.kysely, row.id, request.query);
      const page = await cursorPage({ request, query, baseUrl: config.baseUrl, secret: config.secretKey! });
      return { ...page, results: page.results.map(logView) };
    },
  );

  app.post(
    `${base}:id/logs/:log_id/retry/`,
    {
      config: { scopes: WRITE },
      schema: {
        operationId: 'retry_webhook_delivery',
        summary: 'Retry a dead letter: a fresh cycle from attempt 1 (202 with the queued entry)',
        tags: TAGS,
        params: LogParams,
        response: {
          202: Type.Ref('WebhookDeliveryLogEntry'),
          ...authErrors,
          ...notFoundResponse,
          409: { ...ProblemRef, description: 'Not a dead letter, or already retried' },
        },
      },
    },
    async (request, reply) => {
      const row = await managedSubscription(db.kysely, request, request.params);
      if (!/^\d{1,15}$/.test(request.params.log_id)) throw new NotFoundError();
      if (!config.webhooksEnabled)
        throw new ConflictError('Webhooks are disabled on this service (SERVICE_WEBHOOKS_ENABLED).');
      if (row.is_active !== 1) throw new ConflictError('The subscription is inactive; re-enable it before retrying.');
      const queued = await restartDeadLetter(
        ctx,
        row,
        Number(request.params.log_id),
        requestActor(request, ctx.clientAddresses),
      );
      if (!queued) throw new NotFoundError();
      reply.code(202);
      return logView(queued);
    },
  );

  app.post(
    `${base}:id/test/`,
    {
      config: { scopes: WRITE },
      schema: {
        operationId: 'test_webhook',
        summary: 'Queue a real, signed, logged delivery of a test event (data.test is true) to this subscription only',
        tags: TAGS,
        params: SubscriptionParams,
        body: TestBody,
        response: {
          202: Type.Ref('WebhookDeliveryLogEntry'),
          400: ProblemRef,
          ...authErrors,
          ...notFoundResponse,
          409: { ...ProblemRef, description: 'Inactive subscription' },
        },
      },
    },
    async (request, reply) => {
      const row = await managedSubscription(db.kysely, request, request.params);
      if (!config.webhooksEnabled)
        throw new ConflictError('Webhooks are disabled on this service (SERVICE_WEBHOOKS_ENABLED).');
      if (row.is_active !== 1) throw new ConflictError('The subscription is inactive.');
      const events = JSON.parse(row.events) as string[];
      const receives = events[0] === '*' ? EVENT_NAMES : events;
      const type = request.body?.event_type ?? receives[0];
      if (!isEventType(type) || !receives.includes(type)) {
        throw new ValidationError(`This subscription does not receive "${type}".`, [
          { field: 'event_type', message: `Not one of: ${receives.join(', ')}` },
        ]);
      }
      const queued = await queueTestDelivery(ctx, row, type);
      reply.code(202);
      return logView(queued);
    },
  );
}
