// Stores a verified SES event: one append-only row per recipient and, in the same transaction, the
// suppressions it causes. The unique event key makes a redelivered notification insert nothing, and only a
// newly inserted row may touch the suppression list, so a redelivery never suppresses again.
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import { nowIso } from '../util/time.ts';
import type { RecipientEvent } from './ses-events.ts';
import { insertSuppression, suppressionDecision, type SuppressOutcome } from './suppressions.ts';

export interface StoredEvent {
  key: string;
  email: string | null;
  inserted: boolean;
  suppression: SuppressOutcome | null;
}

export function eventKey(snsMessageId: string, index: number, count: number): string {
  return count === 1 ? snsMessageId : `${snsMessageId}#${index}`;
}

export async function storeEvents(
  db: Kysely<Database>,
  notification: { messageId: string; topicArn: string },
  events: RecipientEvent[],
): Promise<StoredEvent[]> {
  return db.transaction().execute(async (trx) => {
    const stored: StoredEvent[] = [];
    const receivedAt = nowIso();
    for (const [index, event] of events.entries()) {
      const key = eventKey(notification.messageId, index, events.length);
      // Decided before the insert so the event row is written once, complete (append-only).
      const suppression = event.suppress && event.email ? await suppressionDecision(trx, event.email, event.occurredAt) : null;
      const result = await trx
        .insertInto('mail_events')
        .values({
          event_key: key,
          sns_message_id: notification.messageId,
          provider_message_id: event.providerMessageId,
          recipient_index: index,
          email: event.email,
          event_type: event.eventType,
          bounce_type: event.bounceType,
          bounce_subtype: event.bounceSubtype,
          complaint_type: event.complaintType,
          suppressed: suppression === 'suppressed' ? 1 : 0,
          occurred_at: event.occurredAt,
          topic_arn: notification.topicArn,
          detail: JSON.stringify(event.detail),
          received_at: receivedAt,
        })
        .onConflict((oc) => oc.column('event_key').doNothing())
        .executeTakeFirst();
      const inserted = Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
      // Only a newly stored event may suppress: a redelivery changes nothing.
      if (inserted && suppression === 'suppressed') {
        await insertSuppression(trx, {
          email: event.email!,
          reason: event.eventType === 'complaint' ? 'complaint' : 'bounce',
          eventKey: key,
          occurredAt: event.occurredAt,
        });
      }
      stored.push({ key, email: event.email, inserted, suppression: inserted ? suppression : null });
    }
    return stored;
  });
}
