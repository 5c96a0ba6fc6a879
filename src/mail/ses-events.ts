// Reads an SES event (the JSON inside a verified SNS Notification) into one record per recipient, with the
// suppression rule of docs/mail.md ("What is stored"): a Permanent bounce or any complaint suppresses;
// Transient and Undetermined bounces (out-of-office replies arrive as Transient/General), delivery delays
// and everything else do not. Both SES forms are read: notifications (`notificationType`) and event
// publishing (`eventType`).
import { normaliseAddress, parseOneAddress } from './addresses.ts';

export const MAX_RECIPIENTS = 50;

export type EventType =
  'bounce' | 'complaint' | 'delivery' | 'send' | 'reject' | 'delivery_delay' | 'rendering_failure' | 'other';

const TYPES: Record<string, EventType> = {
  Bounce: 'bounce',
  Complaint: 'complaint',
  Delivery: 'delivery',
  Send: 'send',
  Reject: 'reject',
  DeliveryDelay: 'delivery_delay',
  RenderingFailure: 'rendering_failure',
  'Rendering Failure': 'rendering_failure',
};

export interface RecipientEvent {
  email: string | null;
  eventType: EventType;
  bounceType: string | null;
  bounceSubtype: string | null;
  complaintType: string | null;
  suppress: boolean;
  occurredAt: string;
  providerMessageId: string | null;
  /** The part of the event about this recipient, stored for operators. */
  detail: Record<string, unknown>;
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (value: unknown): string | null => (typeof value === 'string' && value.length <= 1000 ? value : null);
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

function isoOrNull(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const time = Date.parse(value);
  return Number.isNaN(time) ? null : new Date(time).toISOString();
}

/** The recipients an event is about, as written by SES. */
function recipientsOf(type: EventType, event: Json, section: Json): unknown[] {
  switch (type) {
    case 'bounce':
      return list(section.bouncedRecipients);
    case 'complaint':
      return list(section.complainedRecipients);
    case 'delivery':
      return list(section.recipients);
    case 'delivery_delay':
      return list(section.delayedRecipients);
    default:
      return list(isObject(event.mail) ? event.mail.destination : undefined);
  }
}

const SECTION: Record<EventType, string> = {
  bounce: 'bounce',
  complaint: 'complaint',
  delivery: 'delivery',
  send: 'send',
  reject: 'reject',
  delivery_delay: 'deliveryDelay',
  rendering_failure: 'failure',
  other: '',
};

export class TooManyRecipients extends Error {}

/** One record per recipient (at least one, with a null email when the event names none). */
export function readSesEvent(event: Json, fallbackTime: string): RecipientEvent[] {
  const rawType = text(event.notificationType) ?? text(event.eventType) ?? '';
  const eventType = TYPES[rawType] ?? 'other';
  const section = isObject(event[SECTION[eventType]]) ? (event[SECTION[eventType]] as Json) : {};
  const mail = isObject(event.mail) ? event.mail : {};
  const recipients = recipientsOf(eventType, event, section);
  if (recipients.length > MAX_RECIPIENTS || list(mail.destination).length > MAX_RECIPIENTS) {
    throw new TooManyRecipients(`the notification names more than ${MAX_RECIPIENTS} recipients`);
  }
  const occurredAt = isoOrNull(section.timestamp) ?? isoOrNull(mail.timestamp) ?? fallbackTime;
  const bounceType = eventType === 'bounce' ? text(section.bounceType) : null;
  const complaintType = eventType === 'complaint' ? text(section.complaintFeedbackType) : null;
  const suppressible = (eventType === 'bounce' && bounceType === 'Permanent') || eventType === 'complaint';
  const base = {
    eventType,
    bounceType,
    bounceSubtype: eventType === 'bounce' ? text(section.bounceSubType) : null,
    complaintType,
    occurredAt,
    providerMessageId: text(mail.messageId),
  };
  if (recipients.length === 0) {
    return [{ ...base, email: null, suppress: false, detail: { type: rawType.slice(0, 64) } }];
  }
  return recipients.map((recipient) => {
    const written =
      typeof recipient === 'string' ? recipient : isObject(recipient) ? text(recipient.emailAddress) : null;
    // A parseable address is stored bare and lower-cased (the suppression key); anything else is kept as
    // written, for the record, and never suppressed.
    const parsed = written === null ? null : parseOneAddress(written);
    return {
      ...base,
      email: parsed ?? (written === null ? null : normaliseAddress(written).slice(0, 320)),
      suppress: suppressible && parsed !== null,
      detail: isObject(recipient) ? recipient : { emailAddress: written },
    };
  });
}
