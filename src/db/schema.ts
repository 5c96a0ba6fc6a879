// Table types for Kysely. Conventions on both databases (see docs/architecture.md):
// times are ISO 8601 UTC strings (`2026-01-31T12:00:00.000Z`, fixed width so they sort as text),
// flags are integers 0/1, lists and objects are JSON text.
import type { Generated, Kysely, Transaction } from 'kysely';

export interface UsersTable {
  id: Generated<number>;
  email: string;
  password_hash: string;
  first_name: string;
  last_name: string;
  display_name: string;
  email_verified_at: string | null;
  is_active: number;
  is_staff: number;
  created_at: string;
  updated_at: string;
}

export interface TeamsTable {
  id: string;
  name: string;
  slug: string;
  is_active: number;
  created_at: string;
  updated_at: string;
}

export interface MembershipsTable {
  id: Generated<number>;
  team_id: string;
  user_id: number;
  role: 'owner' | 'admin' | 'member';
  joined_at: string;
}

export interface PersonalAccessTokensTable {
  id: Generated<number>;
  user_id: number;
  name: string;
  token_hash: string;
  token_prefix: string;
  scopes: string;
  expires_at: string | null;
  last_used_at: string | null;
  revoked_at: string | null;
  created_at: string;
}

export interface ProductsTable {
  id: Generated<number>;
  name: string;
  sku: string;
  price: string;
  created_at: string;
}

export interface EventsTable {
  id: string;
  type: string;
  api_version: string;
  team_id: string;
  data: string;
  created_at: string;
}

/** The team audit log (src/audit/): inserted in the change's transaction, never updated. */
export interface AuditEntriesTable {
  id: Generated<number>;
  team_id: string;
  occurred_at: string;
  action: string;
  actor_type: 'user' | 'system';
  actor_id: number | null;
  actor_email: string | null;
  credential_type: 'session' | 'pat' | 'oauth' | 'jwt' | 'cli' | null;
  credential_id: string | null;
  target_type: string;
  target_id: string;
  ip: string | null;
  user_agent: string | null;
  request_id: string | null;
  /** JSON: the before/after of the changed fields, never a secret. */
  data: string;
}

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

export interface InvitationsTable {
  id: string;
  team_id: string;
  email: string;
  role: 'admin' | 'member';
  message: string | null;
  /** SHA-256 (hex) of the single-use accept token; the raw token exists only in the e-mail. */
  token_hash: string;
  status: 'pending' | 'accepted' | 'revoked' | 'replaced';
  invited_by: number | null;
  accepted_by: number | null;
  created_at: string;
  expires_at: string;
  closed_at: string | null;
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

// OAuth 2.0 authorization server (src/oauth, migration 0008_oauth).
export interface OAuthModelsTable {
  model: string;
  id: string;
  payload: string;
  grant_id: string | null;
  user_code: string | null;
  uid: string | null;
  expires_at: string | null;
  consumed_at: string | null;
}

export interface OAuthConsentsTable {
  user_id: number;
  client_id: string;
  grant_id: string;
  updated_at: string;
}

export interface OAuthDevicePollsTable {
  device_code_id: string;
  interval_seconds: number;
  last_polled_at: string;
  expires_at: string;
}

export interface OAuthUserCodeFailuresTable {
  id: Generated<number>;
  user_id: number;
  address: string;
  created_at: string;
}

export interface SessionsTable {
  id: string;
  user_id: number;
  stage: 'mfa' | 'full';
  created_at: string;
  last_seen_at: string;
  expires_at: string;
  reauth_at: string | null;
  ip: Generated<string>;
  user_agent: Generated<string>;
}

export interface AccountKeysTable {
  key_hash: string;
  purpose: 'confirm_email' | 'password_reset';
  user_id: number;
  email: string;
  created_at: string;
  expires_at: string;
  used_at: string | null;
}

export interface UserTotpTable {
  user_id: number;
  secret_encrypted: string;
  confirmed_at: string | null;
  last_used_step: Generated<number>;
  created_at: string;
}

export interface RecoveryCodesTable {
  id: Generated<number>;
  user_id: number;
  code_hash: string;
  used_at: string | null;
  created_at: string;
}

export interface AuthFailuresTable {
  id: Generated<number>;
  bucket: string;
  created_at: string;
}

export interface JwtKeysTable {
  kid: string;
  alg: string;
  private_jwk_encrypted: string;
  public_jwk: string;
  created_at: string;
  retire_at: string | null;
}

export interface JwtRefreshTokensTable {
  token_hash: string;
  family_id: string;
  user_id: number;
  scope: string;
  created_at: string;
  expires_at: string;
  used_at: string | null;
  revoked_at: string | null;
}

/** Idempotency-Key records; status_code null = reservation of a request still running. */
export interface IdempotencyKeysTable {
  id: Generated<number>;
  user_id: number;
  method: string;
  path: string;
  idempotency_key: string;
  /** SHA-256 (hex) of the raw request body. */
  fingerprint: string;
  status_code: number | null;
  response_body: string | null;
  content_type: string | null;
  location: string | null;
  locked_until: string | null;
  created_at: string;
  expires_at: string;
}

export interface Database {
  idempotency_keys: IdempotencyKeysTable;
  events: EventsTable;
  audit_entries: AuditEntriesTable;
  webhook_subscriptions: WebhookSubscriptionsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  users: UsersTable;
  teams: TeamsTable;
  memberships: MembershipsTable;
  invitations: InvitationsTable;
  personal_access_tokens: PersonalAccessTokensTable;
  products: ProductsTable;
  jwt_refresh_tokens: JwtRefreshTokensTable;
  jwt_keys: JwtKeysTable;
  auth_failures: AuthFailuresTable;
  recovery_codes: RecoveryCodesTable;
  user_totp: UserTotpTable;
  account_keys: AccountKeysTable;
  sessions: SessionsTable;
  mail_outbox: MailOutboxTable;
  mail_events: MailEventsTable;
  mail_suppressions: MailSuppressionsTable;
  oauth_models: OAuthModelsTable;
  oauth_consents: OAuthConsentsTable;
  oauth_device_polls: OAuthDevicePollsTable;
  oauth_user_code_failures: OAuthUserCodeFailuresTable;
}

/** Where a query runs: the database, or a transaction the caller holds open. */
export type Executor = Kysely<Database> | Transaction<Database>;
