// The published event catalog: each registered event type with the JSON Schema of its `data` and a
// full example envelope, read from the registry and built by the envelope code, never written twice.
import type { TSchema } from '@sinclair/typebox';
import { envelopeSchema, exampleEnvelope, type EventEnvelope } from './envelope.ts';
import { EVENT_NAMES, EVENT_TYPES, type EventType } from './registry.ts';

/** Where the catalog is served, relative to BASE_URL (subscriptions' refusals of unknown types point here). */
export const EVENT_CATALOG_PATH = '/api/v1/event-types/';

/** The dialect of the published schemas: the one OpenAPI 3.1 uses. */
export const JSON_SCHEMA_DIALECT = 'https://json-schema.org/draft/2020-12/schema';

export interface CatalogEntry {
  name: EventType;
  description: string;
  group: string;
  /** The JSON Schema of the event's `data`. */
  schema: Record<string, unknown>;
  /** A whole event of this type, as a receiver gets it. */
  example: EventEnvelope;
  deprecated: boolean;
}

/** A TypeBox schema as plain JSON (TypeBox's own symbol keys dropped). */
export function plainSchema(schema: TSchema): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
}

/** Every registered type, in registry order. */
export function eventCatalog(): CatalogEntry[] {
  return EVENT_NAMES.map((name) => {
    const definition = EVENT_TYPES[name];
    return {
      name,
      description: definition.description,
      group: definition.group,
      schema: { $schema: JSON_SCHEMA_DIALECT, ...plainSchema(definition.data) },
      example: exampleEnvelope(name),
      deprecated: definition.deprecated,
    };
  });
}

/** The JSON Schema of whole events of each type (envelope and `data`), keyed by type. */
export function envelopeSchemas(): Record<EventType, Record<string, unknown>> {
  return Object.fromEntries(EVENT_NAMES.map((name) => [name, plainSchema(envelopeSchema(name))])) as Record<
    EventType,
    Record<string, unknown>
  >;
}
