// GET /api/v1/event-types/: the event catalog (events/catalog.ts) for people and tools, the events a
// webhook subscription can name. It needs no
// credential (what events exist is no secret: the docs list them too); like every /api/ request it
// is counted against the caller's bucket, the anonymous one without a credential.
import { Type } from '@sinclair/typebox';
import type { AppContext, TypedApp } from '../app-context.ts';
import { pageEnvelope, pageRequest } from '../http/pagination.ts';
import { DateTime, PageOf, PageQuery, ProblemRef } from '../http/schemas.ts';
import { API_VERSION, EVENT_CATALOG_PATH, eventCatalog, type CatalogEntry } from '../events/index.ts';

const JsonObject = (description: string) => Type.Object({}, { additionalProperties: true, description });

const EventTypeEntry = Type.Object(
  {
    name: Type.String({ description: "The event type, as in subscriptions' `events` and the envelope's `type`" }),
    description: Type.String(),
    group: Type.String({ description: 'The part of the product that emits it' }),
    schema: JsonObject("The JSON Schema (2020-12) of the event's `data`"),
    example: Type.Object(
      {
        id: Type.String(),
        type: Type.String(),
        api_version: Type.String({ description: `Always "${API_VERSION}"` }),
        created_at: DateTime,
        team_id: Type.String({ format: 'uuid' }),
        data: JsonObject('Valid against `schema`'),
      },
      { description: 'A whole event of this type, as a webhook receiver gets it' },
    ),
    deprecated: Type.Boolean({ description: 'Still sent, but going away: stop relying on it' }),
  },
  { $id: 'EventType' },
);

export function registerEventCatalogRoutes(app: TypedApp, { config }: AppContext) {
  app.addSchema(EventTypeEntry);
  let catalog: CatalogEntry[] | undefined;
  app.get(
    EVENT_CATALOG_PATH,
    {
      schema: {
        operationId: 'list_event_types',
        summary: 'Every event type webhooks deliver: its description, the JSON Schema of its data and an example event',
        description:
          'No credential needed. The same catalog as an OpenAPI 3.1 document of webhooks: /api/schema/webhooks/.',
        tags: ['events'],
        security: [],
        querystring: PageQuery,
        response: {
          200: PageOf(Type.Ref('EventType')),
          404: { ...ProblemRef, description: 'Invalid page' },
          429: { ...ProblemRef, description: 'Throttled' },
        },
      },
    },
    async (request) => {
      const paging = pageRequest(request);
      catalog ??= eventCatalog();
      return pageEnvelope(
        config.baseUrl,
        request,
        paging,
        catalog.length,
        catalog.slice(paging.offset, paging.offset + paging.limit),
      );
    },
  );
}
