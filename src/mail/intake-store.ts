// Stores verified SES events: one append-only row per recipient and, in the same transaction, the
// suppressions they cause. The unique event key makes a redelivered notification insert nothing, and only a
// newly inserted row may touch the suppression list, so a redelivery never suppresses again.
//
// Notifications that reach the store in the same turn of the event loop share one transaction (at most
// MAX_BATCH): with one commit per notification the commits, not the verification, would bound the intake
// (docs/performance.md, SNS intake). Each notification still gets its own answer: when a batch fails as a
// whole, its notifications are written again one transaction each, so one bad notification (or a lock
// conflict between processes) costs only its own request.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../db/schema.ts';
import { nowIso } from '../util/time.ts';
import type { RecipientEvent } from './ses-events.ts';
import { insertSuppression, suppressionDecision, type SuppressOutcome } from './suppressions.ts';

const MAX_BATCH = 100;

export interface StoredEvent {
  key: string;
  email: string | null;
  inserted: boolean;
  suppression: SuppressOutcome | null;
}

export interface Notification {
  messageId: string;
  topicArn: string;
}

export function eventKey(snsMessageId: string, index: number, count: number): string {
  return count === 1 ? snsMessageId : `${snsMessageId}#${index}`;
}

/**
 * Whether the event suppresses its address, decided by the database inside the insert (one statement
 * per recipient, replays included): not when the address is already suppressed, nor when an operator
 * released it at or after the event (a late or redelivered event must not undo the release).
 */
function suppressedColumn(event: RecipientEvent) {
  if (!event.suppress || !event.email) return sql<number>`0`;
  return sql<number>`case when exists (select 1 from mail_suppressions where email = ${event.email} and (released_at is null or released_at >= ${event.occurredAt})) then 0 else 1 end`;
}

async function writeNotification(
  trx: Transaction<Database>,
  notification: Notification,
  events: RecipientEvent[],
): Promise<StoredEvent[]> {
  const stored: StoredEvent[] = [];
  const receivedAt = nowIso();
  for (const [index, event] of events.entries()) {
    const key = eventKey(notification.messageId, index, events.length);
    // Written as SQL rather than with the query builder: building and compiling the builder's tree cost
    // more than running the statement, on every notification (replays included).
    const { rows } = await sql<{ suppressed: number }>`
      insert into mail_events (event_key, sns_message_id, provider_message_id, recipient_index, email, event_type, bounce_type,
        bounce_subtype, complaint_type, suppressed, occurred_at, topic_arn, detail, received_at)
      values (${key}, ${notification.messageId}, ${event.providerMessageId}, ${index}, ${event.email}, ${event.eventType}, ${event.bounceType},
        ${event.bounceSubtype}, ${event.complaintType}, ${suppressedColumn(event)}, ${event.occurredAt}, ${notification.topicArn},
        ${JSON.stringify(event.detail)}, ${receivedAt})
      on conflict (event_key) do nothing
      returning suppressed`.execute(trx);
    // No row: the key exists, a redelivery, which changes nothing.
    const row = rows[0];
    let suppression: SuppressOutcome | null = null;
    if (row && Number(row.suppressed) === 1) {
      await insertSuppression(trx, {
        email: event.email!,
        reason: event.eventType === 'complaint' ? 'complaint' : 'bounce',
        eventKey: key,
        occurredAt: event.occurredAt,
      });
      suppression = 'suppressed';
    } else if (row && event.suppress && event.email) {
      // Only to tell the operator why (already suppressed, or released after the event): a new event about
      // an address that is already on the list, not the common case.
      suppression = await suppressionDecision(trx, event.email, event.occurredAt);
    }
    stored.push({ key, email: event.email, inserted: row !== undefined, suppression });
  }
  return stored;
}

interface Pending {
  notification: Notification;
  events: RecipientEvent[];
  resolve: (stored: StoredEvent[]) => void;
  reject: (error: unknown) => void;
}

/** One per app: the writer of the intake's events. */
export class IntakeStore {
  readonly #db: Kysely<Database>;
  #queue: Pending[] = [];
  #flushing = false;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /** Stores one notification's events; resolves once they are committed. */
  store(notification: Notification, events: RecipientEvent[]): Promise<StoredEvent[]> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ notification, events, resolve, reject });
      if (!this.#flushing) {
        this.#flushing = true;
        // The pause lets every notification verified in this turn join the batch.
        setImmediate(() => void this.#flush());
      }
    });
  }

  async #flush(): Promise<void> {
    try {
      while (this.#queue.length > 0) {
        const batch = this.#queue.splice(0, MAX_BATCH);
        let results: StoredEvent[][];
        try {
          results = await this.#db.transaction().execute(async (trx) => {
            const out: StoredEvent[][] = [];
            for (const item of batch) out.push(await writeNotification(trx, item.notification, item.events));
            return out;
          });
        } catch {
          for (const item of batch) {
            try {
              item.resolve(
                await this.#db.transaction().execute((trx) => writeNotification(trx, item.notification, item.events)),
              );
            } catch (error) {
              item.reject(error);
            }
          }
          continue;
        }
        batch.forEach((item, i) => item.resolve(results[i]));
      }
    } finally {
      this.#flushing = false;
    }
  }
}
