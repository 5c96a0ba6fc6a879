// The mail outbox, the provider's events and the suppression list (src/mail/).
import type { Generated } from 'kysely';

export type MailStatus = 'queued' | 'sending' | 'sent' | 'suppressed' | 'failed';

export interface MailOutboxTable {
  id: Generated<number>;
  /** JSON arrays of the addresses as the caller wrote them (display names included). */
  to_addresses: string;
  cc_addresses: string;
  bcc_addresses: string;
  subject: string;
  body_text: string;
  body_html: string | null;
  status: MailStatus;
  /** JSON array of the lower-cased addresses the pre-send guard removed. */
  suppressed_recipients: Generated<string>;
  error: string | null;
  transport_message_id: string | null;
  locked_until: string | null;
  created_at: string;
  updated_at: string;
  sent_at: string | null;
}

export interface MailEventsTable {
  id: Generated<number>;
  event_key: string;
  sns_message_id: string;
  provider_message_id: string | null;
  recipient_index: number;
  email: string | null;
  event_type: string;
  bounce_type: string | null;
  bounce_subtype: string | null;
  complaint_type: string | null;
  suppressed: Generated<number>;
  occurred_at: string;
  topic_arn: string;
  detail: string;
  received_at: string;
}

export interface MailSuppressionsTable {
  id: Generated<number>;
  email: string;
  reason: 'bounce' | 'complaint';
  event_key: string | null;
  occurred_at: string;
  created_at: string;
  released_at: string | null;
  released_by: string | null;
  release_reason: string | null;
}
