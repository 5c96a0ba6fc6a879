// The envelope every event travels in: the same JSON for every consumer and every attempt. The
// outbox, the test deliveries and the published catalog (its examples and schemas) all build it
// here, so what receivers are told and what they get cannot drift apart.
import { randomUUIDv7 } from 'node:crypto';
import { Type, type TSchema } from '@sinclair/typebox';
import { nowIso } from '../util/time.ts';
import { EVENT_TYPES, type EventType } from './registry.ts';

export const API_VERSION = 'v1';

export interface EventEnvelope {
  id: string;
  type: EventType;
  api_version: string;
  created_at: string;
  team_id: string;
  data: Record<string, unknown>;
}

/** An envelope from its parts (the key order is the order receivers see). */
export function envelope(
  id: string,
  type: EventType,
  createdAt: string,
  teamId: string,
  data: Record<string, unknown>,
): EventEnvelope {
  return { id, type, api_version: API_VERSION, created_at: createdAt, team_id: teamId, data };
}

/**
 * A new event of a team, created now. Its id is a UUIDv7 (time first, then 74 random bits), so new
 * events land at the end of the events table's key and of the delivery log's event index, and the
 * log purge, which deletes the oldest, empties whole pages of both: with random ids every new and
 * every purged row touched a page of its own anywhere in them.
 */
export function newEnvelope(type: EventType, teamId: string, data: Record<string, unknown>): EventEnvelope {
  return envelope(`evt_${randomUUIDv7()}`, type, nowIso(), teamId, data);
}

/** A test delivery's event: the registry's example `data` with `test: true`, valid against the published schema. */
export function testEnvelope(type: EventType, teamId: string): EventEnvelope {
  return newEnvelope(type, teamId, { ...EVENT_TYPES[type].example, test: true });
}

/** The catalog's example of a type: fixed id, time and team, so the published catalog is the same on every request. */
export function exampleEnvelope(type: EventType): EventEnvelope {
  return envelope(
    'evt_3b0c4f8e-5d7a-4a53-9d3e-2a8f0f2f7c11',
    type,
    '2026-11-22T05:00:00.000Z',
    '8f14e45f-ceea-467f-a0e5-0d3b5c4a1b2c',
    EVENT_TYPES[type].example,
  );
}

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

/** The JSON Schema of a whole event of `type`: the envelope fields, and `data` as the registry defines it. */
export function envelopeSchema(type: EventType): TSchema {
  return Type.Object(
    {
      id: Type.String({
        pattern: `^evt_${UUID}$`,
        description: 'Unique per event, the same on every attempt: deduplicate on it',
      }),
      type: Type.Literal(type),
      api_version: Type.Literal(API_VERSION),
      created_at: Type.String({ format: 'date-time', description: 'When the event occurred (UTC)' }),
      team_id: Type.String({ format: 'uuid', description: 'The team the event belongs to' }),
      data: EVENT_TYPES[type].data,
    },
    { description: EVENT_TYPES[type].description },
  );
}
