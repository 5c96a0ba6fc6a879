// The subscriptions API: /api/v1/teams/{team_id}/webhooks/ and /{id}/ (create, list, read, change,
// delete, rotate the secret).
import { Type } from '@sinclair/typebox';
import type { AppContext, TypedApp } from '../app-context.ts';
import { requestActor } from '../audit/actor.ts';
import { pageEnvelope, pageRequest } from '../http/pagination.ts';
import { PageOf, PageQuery, ProblemRef, authErrors } from '../http/schemas.ts';
import { managedSubscription, managedTeam } from './access.ts';
import {
  CreateBody,
  PatchBody,
  READ,
  SubscriptionParams,
  TAGS,
  TeamParams,
  WRITE,
  notFoundResponse,
} from './schemas.ts';
import type { AddressGuard } from './ssrf.ts';
import {
  createSubscription,
  deleteSubscription,
  listSubscriptions,
  rotateSecret,
  subscriptionView,
  updateSubscription,
} from './subscriptions.ts';

/** `base` is the collection's path, ending in a slash. */
export function registerSubscriptionRoutes(app: TypedApp, ctx: AppContext, guard: AddressGuard, base: string) {
  const { db, config } = ctx;

  app.post(
    base,
    {
      config: { scopes: WRITE },
      schema: {
        operationId: 'create_webhook',
        summary: 'Create a subscription; the response carries the signing secret, shown only here',
        tags: TAGS,
        params: TeamParams,
        body: CreateBody,
        response: {
          201: Type.Ref('WebhookSubscriptionWithSecret'),
          400: ProblemRef,
          ...authErrors,
          ...notFoundResponse,
          409: { ...ProblemRef, description: 'Subscription cap reached' },
        },
      },
    },
    async (request, reply) => {
      const team = await managedTeam(db.kysely, request, request.params.team_id);
      const { row, secret } = await createSubscription(
        ctx,
        guard,
        team.id,
        request.body,
        requestActor(request, ctx.clientAddresses),
      );
      reply.code(201);
      return { ...subscriptionView(row), secret };
    },
  );

  app.get(
    base,
    {
      config: { scopes: READ },
      schema: {
        operationId: 'list_webhooks',
        summary: "The team's subscriptions, oldest first",
        tags: TAGS,
        params: TeamParams,
        querystring: PageQuery,
        response: { 200: PageOf(Type.Ref('WebhookSubscription')), ...authErrors, ...notFoundResponse },
      },
    },
    async (request) => {
      const team = await managedTeam(db.kysely, request, request.params.team_id);
      const paging = pageRequest(request);
      const { count, rows } = await listSubscriptions(db.kysely, team.id, paging.limit, paging.offset);
      return pageEnvelope(config.baseUrl, request, paging, count, rows.map(subscriptionView));
    },
  );

  app.get(
    `${base}:id/`,
    {
      config: { scopes: READ },
      schema: {
        operationId: 'get_webhook',
        summary: 'One subscription',
        tags: TAGS,
        params: SubscriptionParams,
        response: { 200: Type.Ref('WebhookSubscription'), ...authErrors, ...notFoundResponse },
      },
    },
    async (request) => subscriptionView(await managedSubscription(db.kysely, request, request.params)),
  );

  app.patch(
    `${base}:id/`,
    {
      config: { scopes: WRITE },
      schema: {
        operationId: 'update_webhook',
        summary: 'Change url, events or is_active (re-enabling resets the failure count)',
        tags: TAGS,
        params: SubscriptionParams,
        body: PatchBody,
        response: { 200: Type.Ref('WebhookSubscription'), 400: ProblemRef, ...authErrors, ...notFoundResponse },
      },
    },
    async (request) => {
      const row = await managedSubscription(db.kysely, request, request.params);
      return subscriptionView(
        await updateSubscription(
          db.kysely,
          guard,
          row,
          request.body,
          config.baseUrl,
          requestActor(request, ctx.clientAddresses),
        ),
      );
    },
  );

  app.delete(
    `${base}:id/`,
    {
      config: { scopes: WRITE },
      schema: {
        operationId: 'delete_webhook',
        summary: 'Delete a subscription; its pending deliveries stop',
        tags: TAGS,
        params: SubscriptionParams,
        response: { 204: Type.Null(), ...authErrors, ...notFoundResponse },
      },
    },
    async (request, reply) => {
      await deleteSubscription(
        db.kysely,
        await managedSubscription(db.kysely, request, request.params),
        requestActor(request, ctx.clientAddresses),
      );
      reply.code(204);
      return null;
    },
  );

  app.post(
    `${base}:id/rotate-secret/`,
    {
      config: { scopes: WRITE },
      schema: {
        operationId: 'rotate_webhook_secret',
        summary: 'New signing secret (shown once); the old one keeps signing during the overlap window',
        tags: TAGS,
        params: SubscriptionParams,
        response: { 200: Type.Ref('WebhookSubscriptionWithSecret'), ...authErrors, ...notFoundResponse },
      },
    },
    async (request) => {
      const { row, secret } = await rotateSecret(
        ctx,
        await managedSubscription(db.kysely, request, request.params),
        requestActor(request, ctx.clientAddresses),
      );
      return { ...subscriptionView(row), secret };
    },
  );
}
