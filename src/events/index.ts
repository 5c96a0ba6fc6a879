// The events layer: what features emit and consumers (webhooks) receive. It imports no feature.
export { API_VERSION, newEnvelope, type EventEnvelope } from './envelope.ts';
export { EventOutbox, type BoundEvent, type EventConsumer, type EventField, type EventInput, type JsonRows } from './outbox.ts';
export { EVENT_NAMES, EVENT_TYPES, isEventType, type EventData, type EventDefinition, type EventType } from './registry.ts';
