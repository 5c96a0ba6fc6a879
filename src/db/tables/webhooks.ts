// Events (src/events/), webhook subscriptions and the delivery log, which is the queue (src/webhooks/).
import type { Generated } from 'kysely';

export interface EventsTable {
  id: string;
  type: string;
  api_version: string;
  team_id: string;
  data: string;
  created_at: string;
}

export interface WebhookSubscriptionsTable {
  id: string;
  team_id: string;
  url: string;
  /** JSON array of event names, or ["*"]. */
  events: string;
  /** encryptSecret(SECRET_KEY, secret, "webhook:<id>"); the plaintext is never stored. */
  secret_encrypted: string;
  /** The secret before the last rotation, still signed with until previous_secret_expires_at. */
  previous_secret_encrypted: string | null;
  previous_secret_expires_at: string | null;
  is_active: number;
  /** 1: deliveries also carry the Standard Webhooks headers (webhook-id, webhook-timestamp, webhook-signature). */
  standard_webhooks: number;
  consecutive_failures: number;
  disabled_at: string | null;
  disabled_reason: string | null;
  created_at: string;
  updated_at: string;
}

export type WebhookDeliveryStatus = 'pending' | 'success' | 'failed' | 'dead_letter';

/** One row per attempt; a `pending` row is an attempt not made yet, due at next_retry_at. */
export interface WebhookDeliveriesTable {
  id: Generated<number>;
  subscription_id: string;
  event_id: string;
  event_type: string;
  /** The exact body bytes sent on every attempt of this event. */
  payload: string;
  attempt: number;
  status: WebhookDeliveryStatus;
  next_retry_at: string | null;
  status_code: number | null;
  response_body: string | null;
  duration_ms: number | null;
  locked_until: string | null;
  lease_token: string | null;
  created_at: string;
}
