// The envelope every event travels in: the same JSON for every consumer and every attempt.
import { randomUUID } from 'node:crypto';
import { nowIso } from '../util/time.ts';
import type { EventType } from './registry.ts';

export const API_VERSION = 'v1';

export interface EventEnvelope {
  id: string;
  type: EventType;
  api_version: string;
  created_at: string;
  team_id: string;
  data: Record<string, unknown>;
}

/** A new event of a team, created now (the key order is the order receivers see). */
export function newEnvelope(type: EventType, teamId: string, data: Record<string, unknown>): EventEnvelope {
  return { id: `evt_${randomUUID()}`, type, api_version: API_VERSION, created_at: nowIso(), team_id: teamId, data };
}
