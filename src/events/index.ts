// The events layer: what features emit and consumers (webhooks) receive. It imports no feature.
export {
  API_VERSION,
  envelope,
  envelopeSchema,
  exampleEnvelope,
  newEnvelope,
  testEnvelope,
  type EventEnvelope,
} from './envelope.ts';
export {
  EVENT_CATALOG_PATH,
  JSON_SCHEMA_DIALECT,
  envelopeSchemas,
  eventCatalog,
  plainSchema,
  type CatalogEntry,
} from './catalog.ts';
export {
  EventOutbox,
  type BoundEvent,
  type EventConsumer,
  type EventField,
  type EventInput,
  type JsonRows,
} from './outbox.ts';
export {
  EVENT_NAMES,
  EVENT_TYPES,
  isEventType,
  type EventData,
  type EventDefinition,
  type EventType,
} from './registry.ts';
