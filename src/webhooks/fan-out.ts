// Webhooks consume events: each event becomes one pending delivery row per receiving subscription
// (active, of an active team, its filter naming the type or "*"), due at once and carrying the exact
// body every attempt sends. The event outbox (events/outbox.ts) runs this statement in the emitting
// transaction, with the event's row, so the deliveries commit with the change that caused them.
import { sql } from 'kysely';
import type { EventConsumer } from '../events/index.ts';
import { WAKE_CHANNEL, WAKE_EVENT } from './wake.ts';

export const webhookFanOut: EventConsumer = {
  channel: WAKE_CHANNEL,
  wake: WAKE_EVENT,
  insert: (field, jsonRows) => sql`insert into webhook_deliveries
      (subscription_id, event_id, event_type, payload, attempt, status, next_retry_at, created_at)
    select s.id, ${field('id')}, ${field('type')}, ${field('payload')}, 1, 'pending', ${field('created_at')}, ${field('created_at')}
    from webhook_subscriptions s join teams t on t.id = s.team_id
    where s.team_id = ${field('team_id')} and s.is_active = 1 and t.is_active = 1
      and exists (select 1 from ${jsonRows(sql`s.events`)} where value in ('*', ${field('type')}))
    order by s.id`,
};
