// The webhooks API's schemas: what its routes accept and answer (and what the OpenAPI document says).
import { Type } from '@sinclair/typebox';
import { CursorQuery } from '../http/cursor.ts';
import { DateTime, ProblemRef } from '../http/schemas.ts';

/** Scopes: reads accept any of READ, changes any of WRITE. */
export const READ = ['read:webhooks', 'write:webhooks', 'webhooks:manage'];
export const WRITE = ['write:webhooks', 'webhooks:manage'];
export const TAGS = ['webhooks'];

const subscriptionFields = {
  id: Type.String({ format: 'uuid' }),
  team_id: Type.String({ format: 'uuid' }),
  url: Type.String(),
  events: Type.Array(Type.String()),
  is_active: Type.Boolean(),
  standard_webhooks: Type.Boolean({
    description:
      'Deliveries also carry the Standard Webhooks headers (webhook-id, webhook-timestamp, webhook-signature)',
  }),
  disabled_at: Type.Union([DateTime, Type.Null()], {
    description: 'When it was disabled automatically; null once re-enabled',
  }),
  disabled_reason: Type.Union([Type.String(), Type.Null()]),
  created_at: DateTime,
  updated_at: DateTime,
};
export const Subscription = Type.Object(subscriptionFields, { $id: 'WebhookSubscription' });
export const SubscriptionWithSecret = Type.Object(
  { ...subscriptionFields, secret: Type.String({ description: 'Signing secret; shown only in this response' }) },
  { $id: 'WebhookSubscriptionWithSecret' },
);
const DeliveryStatus = Type.Union(['pending', 'success', 'failed', 'dead_letter'].map((s) => Type.Literal(s)));
export const LogEntry = Type.Object(
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

export const TeamParams = Type.Object({ team_id: Type.String({ description: 'Team UUID' }) });
export const SubscriptionParams = Type.Object({
  team_id: Type.String(),
  id: Type.String({ description: 'Subscription UUID' }),
});
export const LogParams = Type.Object({
  team_id: Type.String(),
  id: Type.String(),
  log_id: Type.String({ description: 'Log entry id' }),
});
const UrlField = Type.String({ maxLength: 2048, description: 'Absolute https:// URL; must reach the public Internet' });
const EventsField = Type.Array(Type.String({ maxLength: 200 }), {
  maxItems: 100,
  description: 'Event names, or ["*"] for all',
});
const StandardWebhooksField = Type.Boolean({
  description:
    'Also send the Standard Webhooks headers (webhook-id, webhook-timestamp, webhook-signature); default true. The body is the same either way',
});
export const CreateBody = Type.Object({
  url: UrlField,
  events: EventsField,
  standard_webhooks: Type.Optional(StandardWebhooksField),
});
export const PatchBody = Type.Object({
  url: Type.Optional(UrlField),
  events: Type.Optional(EventsField),
  is_active: Type.Optional(Type.Boolean()),
  standard_webhooks: Type.Optional(StandardWebhooksField),
});
export const LogQuery = Type.Object({
  ...CursorQuery.properties,
  status: Type.Optional(DeliveryStatus),
  event_type: Type.Optional(Type.String()),
  event_id: Type.Optional(Type.String()),
});
export const TestBody = Type.Union([Type.Object({ event_type: Type.Optional(Type.String()) }), Type.Null()]);

export const notFoundResponse = {
  404: { ...ProblemRef, description: 'Unknown team or subscription, or not a member' },
};
