// Webhook subscriptions API: /api/v1/teams/{team_id}/webhooks/… Owner or admin of the team only
// (a member gets 403, a non-member 404); reads need read:webhooks, write:webhooks or
// webhooks:manage, changes need write:webhooks or webhooks:manage.
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { AppContext, TypedApp } from '../app-context.ts';
import { requestActor } from '../audit/actor.ts';
import { CursorPageOf, CursorQuery, cursorPage } from '../http/cursor.ts';
import { requireUser } from '../http/identity.ts';
import { pageEnvelope, pageRequest } from '../http/pagination.ts';
import { badRequest, conflict, forbidden, notFound } from '../http/problem.ts';
import { DateTime, PageOf, PageQuery, ProblemRef, authErrors } from '../http/schemas.ts';
import { EVENT_NAMES, testEnvelope } from '../events/index.ts';
import { teamForMember } from '../teams/teams.ts';
import { isUuid } from '../util/uuid.ts';
import { warnIfGuardRelaxed } from './log.ts';
import { RetryRefused, retryDeadLetter } from './queue.ts';
import { AddressGuard } from './ssrf.ts';
import { wakeDeliveryWorkers } from './wake.ts';
import {
  WebhookError,
  createSubscription,
  deleteSubscription,
  findSubscription,
  listSubscriptions,
  rotateSecret,
  subscriptionView,
  updateSubscription,
  type SubscriptionRow,
} from './subscriptions.ts';

const READ = ['read:webhooks', 'write:webhooks', 'webhooks:manage'];
const WRITE = ['write:webhooks', 'webhooks:manage'];
const TAGS = ['webhooks'];

const subscriptionFields = {
  id: Type.String({ format: 'uuid' }),
  team_id: Type.String({ format: 'uuid' }),
  url: Type.String(),
  events: Type.Array(Type.String()),
  is_active: Type.Boolean(),
  disabled_at: Type.Union([DateTime, Type.Null()], { description: 'When it was disabled automatically; null once re-enabled' }),
  disabled_reason: Type.Union([Type.String(), Type.Null()]),
  created_at: DateTime,
  updated_at: DateTime,
};
const Subscription = Type.Object(subscriptionFields, { $id: 'WebhookSubscription' });
const SubscriptionWithSecret = Type.Object(
  { ...subscriptionFields, secret: Type.String({ description: 'Signing secret; shown only in this response' }) },
  { $id: 'WebhookSubscriptionWithSecret' },
);
const DeliveryStatus = Type.Union(['pending', 'success', 'failed', 'dead_letter'].map((s) => Type.Literal(s)));
const LogEntry = Type.Object(
  {
    id: Type.Integer(),
    subscription: Type.String({ format: 'uuid' }),
    event_id: Type.String(),
    event_type: Type.String(),
    payload: Type.Object({}, { additionalProperties: true, description: 'The envelope exactly as sent' }),
    attempt: Type.Integer({ minimum: 1 }),
    next_retry_at: Type.Union([DateTime, Type.Null()]),
    status_code: Type.Union([Type.Integer(), Type.Null()]),
    response_body: Type.Union([Type.String(), Type.Null()]),
    duration_ms: Type.Union([Type.Integer(), Type.Null()]),
    created_at: DateTime,
    status: DeliveryStatus,
  },
  { $id: 'WebhookDeliveryLogEntry' },
);

const TeamParams = Type.Object({ team_id: Type.String({ description: 'Team UUID' }) });
const SubscriptionParams = Type.Object({ team_id: Type.String(), id: Type.String({ description: 'Subscription UUID' }) });
const LogParams = Type.Object({ team_id: Type.String(), id: Type.String(), log_id: Type.String({ description: 'Log entry id' }) });
const UrlField = Type.String({ maxLength: 2048, description: 'Absolute https:// URL; must reach the public Internet' });
const EventsField = Type.Array(Type.String({ maxLength: 200 }), { maxItems: 100, description: 'Event names, or ["*"] for all' });
const CreateBody = Type.Object({ url: UrlField, events: EventsField });
const PatchBody = Type.Object({ url: Type.Optional(UrlField), events: Type.Optional(EventsField), is_active: Type.Optional(Type.Boolean()) });
const LogQuery = Type.Object({
  ...CursorQuery.properties,
  status: Type.Optional(DeliveryStatus),
  event_type: Type.Optional(Type.String()),
  event_id: Type.Optional(Type.String()),
});
const TestBody = Type.Union([Type.Object({ event_type: Type.Optional(Type.String()) }), Type.Null()]);

const notFoundResponse = { 404: { ...ProblemRef, description: 'Unknown team or subscription, or not a member' } };

interface LogRow {
  id: number;
  subscription_id: string;
  event_id: string;
  event_type: string;
  payload: string;
  attempt: number;
  next_retry_at: string | null;
  status_code: number | null;
  response_body: string | null;
  duration_ms: number | null;
  created_at: string;
  status: string;
}

function logView(row: LogRow) {
  return {
    id: Number(row.id),
    subscription: row.subscription_id,
    event_id: row.event_id,
    event_type: row.event_type,
    payload: JSON.parse(row.payload) as Record<string, unknown>,
    attempt: row.attempt,
    next_retry_at: row.next_retry_at,
    status_code: row.status_code,
    response_body: row.response_body,
    duration_ms: row.duration_ms,
    created_at: row.created_at,
    status: row.status,
  };
}

function asProblem(error: unknown): never {
  if (error instanceof WebhookError) {
    if (error.code === 'conflict') throw conflict(error.message);
    if (error.code === 'not_found') throw notFound();
    throw badRequest(error.message, error.field ? [{ field: error.field, message: error.message }] : undefined);
  }
  throw error;
}

export function registerWebhookRoutes(app: TypedApp, ctx: AppContext) {
  const { db, config } = ctx;
  const guard = new AddressGuard(config.webhooks);
  warnIfGuardRelaxed(ctx);
  app.addSchema(Subscription);
  app.addSchema(SubscriptionWithSecret);
  app.addSchema(LogEntry);

  /** The team, when the caller is its owner or admin: member → 403, anything else → 404. */
  async function managedTeam(request: FastifyRequest, teamId: string) {
    const team = await teamForMember(db.kysely, teamId, requireUser(request).user.id);
    if (!team) throw notFound();
    if (team.role !== 'owner' && team.role !== 'admin') throw forbidden('Only owners and admins of the team can manage its webhooks.');
    return team;
  }

  async function managedSubscription(request: FastifyRequest, params: { team_id: string; id: string }): Promise<SubscriptionRow> {
    const team = await managedTeam(request, params.team_id);
    if (!isUuid(params.id)) throw notFound();
    const row = await findSubscription(db.kysely, team.id, params.id);
    if (!row) throw notFound();
    return row;
  }

  const base = '/api/v1/teams/:team_id/webhooks/';

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
        response: { 201: Type.Ref('WebhookSubscriptionWithSecret'), 400: ProblemRef, ...authErrors, ...notFoundResponse, 409: { ...ProblemRef, description: 'Subscription cap reached' } },
      },
    },
    async (request, reply) => {
      const team = await managedTeam(request, request.params.team_id);
      const { row, secret } = await createSubscription(ctx, guard, team.id, request.body, requestActor(request, ctx.clientAddresses)).catch(asProblem);
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
      const team = await managedTeam(request, request.params.team_id);
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
    async (request) => subscriptionView(await managedSubscription(request, request.params)),
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
      const row = await managedSubscription(request, request.params);
      return subscriptionView(await updateSubscription(db.kysely, guard, row, request.body, config.baseUrl, requestActor(request, ctx.clientAddresses)).catch(asProblem));
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
      await deleteSubscription(db.kysely, await managedSubscription(request, request.params), requestActor(request, ctx.clientAddresses));
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
      const { row, secret } = await rotateSecret(ctx, await managedSubscription(request, request.params), requestActor(request, ctx.clientAddresses));
      return { ...subscriptionView(row), secret };
    },
  );

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
      const row = await managedSubscription(request, request.params);
      const { status, event_type, event_id } = request.query;
      let query = db.kysely
        .selectFrom('webhook_deliveries')
        .select(['id', 'subscription_id', 'event_id', 'event_type', 'payload', 'attempt', 'next_retry_at', 'status_code', 'response_body', 'duration_ms', 'created_at', 'status'])
        .where('subscription_id', '=', row.id);
      if (status) query = query.where('status', '=', status);
      if (event_type) query = query.where('event_type', '=', event_type);
      if (event_id) query = query.where('event_id', '=', event_id);
      const page = await cursorPage({ request, query, baseUrl: config.baseUrl, secret: config.secretKey! });
      return { ...page, results: page.results.map((entry) => logView(entry as LogRow)) };
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
        response: { 202: Type.Ref('WebhookDeliveryLogEntry'), ...authErrors, ...notFoundResponse, 409: { ...ProblemRef, description: 'Not a dead letter, or already retried' } },
      },
    },
    async (request, reply) => {
      const row = await managedSubscription(request, request.params);
      if (!/^\d{1,15}$/.test(request.params.log_id)) throw notFound();
      if (!config.webhooksEnabled) throw conflict('Webhooks are disabled on this service (SERVICE_WEBHOOKS_ENABLED).');
      if (row.is_active !== 1) throw conflict('The subscription is inactive; re-enable it before retrying.');
      const queued = await db.kysely
        .transaction()
        .execute((trx) => retryDeadLetter(trx, row.id, Number(request.params.log_id), requestActor(request, ctx.clientAddresses), row.team_id))
        .catch((error) => {
          if (error instanceof RetryRefused) throw conflict(error.message);
          throw error;
        });
      if (!queued) throw notFound();
      void wakeDeliveryWorkers(ctx);
      reply.code(202);
      return logView({ ...queued, next_retry_at: queued.next_retry_at });
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
        response: { 202: Type.Ref('WebhookDeliveryLogEntry'), 400: ProblemRef, ...authErrors, ...notFoundResponse, 409: { ...ProblemRef, description: 'Inactive subscription' } },
      },
    },
    async (request, reply) => {
      const row = await managedSubscription(request, request.params);
      if (!config.webhooksEnabled) throw conflict('Webhooks are disabled on this service (SERVICE_WEBHOOKS_ENABLED).');
      if (row.is_active !== 1) throw conflict('The subscription is inactive.');
      const events = JSON.parse(row.events) as string[];
      const receives = events[0] === '*' ? EVENT_NAMES : events;
      const type = request.body?.event_type ?? receives[0];
      if (!receives.includes(type as (typeof EVENT_NAMES)[number])) {
        throw badRequest(`This subscription does not receive "${type}".`, [{ field: 'event_type', message: `Not one of: ${receives.join(', ')}` }]);
      }
      const envelope = testEnvelope(type as (typeof EVENT_NAMES)[number], row.team_id);
      const now = envelope.created_at;
      const values = {
        subscription_id: row.id,
        event_id: envelope.id,
        event_type: type,
        payload: JSON.stringify(envelope),
        attempt: 1,
        status: 'pending' as const,
        next_retry_at: now,
        created_at: now,
      };
      const inserted = await db.kysely.insertInto('webhook_deliveries').values(values).returning('id').executeTakeFirstOrThrow();
      void wakeDeliveryWorkers(ctx);
      reply.code(202);
      return logView({ ...values, id: Number(inserted.id), status_code: null, response_body: null, duration_ms: null });
    },
  );
}
