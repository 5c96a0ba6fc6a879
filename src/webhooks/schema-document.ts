// GET /api/schema/webhooks/: the deliveries as an OpenAPI 3.1 document. Its `webhooks` map has one
// POST per event type of the registry, whose body is that type's whole envelope (events/catalog.ts)
// and whose header parameters are the signature and event headers every delivery carries, so that
// openapi-typescript and webhook platforms can import what receivers get. It is served whatever
// SERVICE_API_DOCS_PUBLIC says: it tells no more than the public event catalog and docs/webhooks.md.
import type { AppContext, TypedApp } from '../app-context.ts';
import {
  EVENT_CATALOG_PATH,
  EVENT_NAMES,
  EVENT_TYPES,
  envelopeSchemas,
  exampleEnvelope,
  type EventType,
} from '../events/index.ts';

export const WEBHOOKS_DOCUMENT_PATH = '/api/schema/webhooks/';

type Header = {
  name: string;
  required: boolean;
  description: string;
  schema: Record<string, unknown>;
  example: string;
};

const HEADERS: Record<string, Header> = {
  ServiceSignature: {
    name: 'X-Service-Signature',
    required: true,
    description:
      "The service's own signature: `t=<Unix seconds when the attempt was prepared>,v1=<hex HMAC-SHA256>`, the HMAC keyed " +
      'with the subscription secret string exactly as shown at creation or rotation (its UTF-8 bytes) over `<t>.<raw body>`. ' +
      "During a rotation's overlap two `v1` values follow, the new secret's first. Compare in constant time; refuse a `t` " +
      'more than 5 minutes from your clock.',
    schema: { type: 'string', pattern: '^t=[0-9]+(,v1=[0-9a-f]{64})+$' },
    example: 't=1795323600,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd',
  },
  WebhookId: {
    name: 'webhook-id',
    required: false,
    description:
      "Standard Webhooks: the envelope's `id`, the same on every attempt. Absent when the subscription has `standard_webhooks: false`.",
    schema: { type: 'string' },
    example: 'evt_3b0c4f8e-5d7a-4a53-9d3e-2a8f0f2f7c11',
  },
  WebhookTimestamp: {
    name: 'webhook-timestamp',
    required: false,
    description:
      "Standard Webhooks: the attempt's Unix seconds (the `t` of X-Service-Signature). Absent when the subscription has `standard_webhooks: false`.",
    schema: { type: 'string', pattern: '^[0-9]+$' },
    example: '1795323600',
  },
  WebhookSignature: {
    name: 'webhook-signature',
    required: false,
    description:
      'Standard Webhooks: `v1,<base64 HMAC-SHA256>` over `<webhook-id>.<webhook-timestamp>.<raw body>`, keyed with the ' +
      "base64-decoded subscription secret (a Standard Webhooks library takes `whsec_` + the secret). During a rotation's " +
      "overlap two signatures, space-separated, the new secret's first. Absent when the subscription has `standard_webhooks: false`.",
    schema: { type: 'string', pattern: '^v1,[A-Za-z0-9+/=]+( v1,[A-Za-z0-9+/=]+)*$' },
    example: 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
  },
  ServiceEvent: {
    name: 'X-Service-Event',
    required: true,
    description: "The event type (the envelope's `type`).",
    schema: { type: 'string' },
    example: 'team.member.added',
  },
  ServiceEventId: {
    name: 'X-Service-Event-Id',
    required: true,
    description: "The envelope's `id`.",
    schema: { type: 'string' },
    example: 'evt_3b0c4f8e-5d7a-4a53-9d3e-2a8f0f2f7c11',
  },
  ServiceAttempt: {
    name: 'X-Service-Attempt',
    required: true,
    description: 'The attempt number, from 1; a retry sends the same body with a fresh signature.',
    schema: { type: 'string', pattern: '^[1-9][0-9]*$' },
    example: '1',
  },
};

function operation(type: EventType) {
  const definition = EVENT_TYPES[type];
  return {
    operationId: type.replaceAll('.', '_'),
    summary: definition.description,
    tags: [definition.group],
    deprecated: definition.deprecated,
    parameters: Object.keys(HEADERS).map((key) => ({ $ref: `#/components/parameters/${key}` })),
    requestBody: {
      required: true,
      description:
        'The event, serialised once: every attempt sends the same bytes. Verify the signature over the raw body before parsing it.',
      content: {
        'application/json': { schema: { $ref: `#/components/schemas/${type}` }, example: exampleEnvelope(type) },
      },
    },
    responses: {
      '2XX': { description: 'Received: the delivery succeeded. Answer fast and do slow work afterwards.' },
      default: {
        description:
          'Any other answer, a redirect, or no answer within the delivery timeout is a failure: the event is sent again ' +
          "on the retry schedule. Deduplicate on the envelope's `id`: delivery is at least once.",
      },
    },
  };
}

/** The document, for a service at `baseUrl`. */
export function webhooksDocument(baseUrl: string) {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Service webhooks',
      version: 'v1',
      description:
        'The events this service POSTs to webhook subscriptions, one entry per event type. The same catalog, with each ' +
        `type's description and the JSON Schema of its data, is at ${baseUrl}${EVENT_CATALOG_PATH}.`,
    },
    webhooks: Object.fromEntries(EVENT_NAMES.map((type) => [type, { post: operation(type) }])),
    components: {
      schemas: envelopeSchemas(),
      parameters: Object.fromEntries(
        Object.entries(HEADERS).map(([key, header]) => [key, { in: 'header', ...header }]),
      ),
    },
  };
}

export function registerWebhooksDocument(app: TypedApp, { config }: AppContext) {
  let document: ReturnType<typeof webhooksDocument> | undefined;
  app.get(
    WEBHOOKS_DOCUMENT_PATH,
    { schema: { hide: true } },
    async () => (document ??= webhooksDocument(config.baseUrl)),
  );
}
