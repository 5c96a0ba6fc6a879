// dispatch(): the one way business code emits an outbound event. It writes the event row (and,
// in the webhooks capability, one delivery row per matching subscription) inside the caller's
// transaction, so the event exists exactly when the change that caused it is committed.
import { randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { AppContext } from '../app-context.ts';
import type { Database } from '../db/schema.ts';
import { nowIso } from '../util/time.ts';
import { API_VERSION, type EventType } from './events.ts';

export type Executor = Kysely<Database> | Transaction<Database>;

export interface EventEnvelope {
  id: string;
  type: EventType;
  api_version: string;
  created_at: string;
  team_id: string;
  data: Record<string, unknown>;
}

/**
 * Records an event for a team. Does nothing (returns null) when SERVICE_WEBHOOKS_ENABLED is off.
 * `data` holds only stable identifiers and UTC timestamps; the envelope fields are added here.
 */
export async function dispatch(
  ctx: Pick<AppContext, 'config' | 'wake'>,
  trx: Executor,
  teamId: string,
  type: EventType,
  data: Record<string, unknown>,
): Promise<EventEnvelope | null> {
  if (!ctx.config.webhooksEnabled) return null;
  const event: EventEnvelope = {
    id: `evt_${randomUUID()}`,
    type,
    api_version: API_VERSION,
    created_at: nowIso(),
    team_id: teamId,
    data,
  };
  await trx
    .insertInto('events')
    .values({ ...event, data: JSON.stringify(data) })
    .execute();
  return event;
}
