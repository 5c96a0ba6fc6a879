// Table types for Kysely: the one description of the schema, from which every row type derives
// (Row, NewRow below). Each capability's tables are described in tables/<capability>.ts.
// Conventions on both databases (see docs/architecture.md):
// times are ISO 8601 UTC strings (`2026-01-31T12:00:00.000Z`, fixed width so they sort as text),
// flags are integers 0/1, lists and objects are JSON text.
import type { Generated, Insertable, Kysely, Selectable, Transaction } from 'kysely';
import type { AuditEntriesTable } from './tables/audit.ts';
import type {
  AccountKeysTable,
  AuthFailuresTable,
  RecoveryCodesTable,
  SessionsTable,
  UsersTable,
  UserTotpTable,
} from './tables/accounts.ts';
import type { JwtKeysTable, JwtRefreshTokensTable, PersonalAccessTokensTable } from './tables/tokens.ts';
import type {
  OAuthConsentsTable,
  OAuthDevicePollsTable,
  OAuthModelsTable,
  OAuthUserCodeFailuresTable,
} from './tables/oauth.ts';
import type { InvitationsTable, MembershipsTable, TeamsTable } from './tables/teams.ts';
import type { EventsTable, WebhookDeliveriesTable, WebhookSubscriptionsTable } from './tables/webhooks.ts';
import type { MailEventsTable, MailOutboxTable, MailSuppressionsTable } from './tables/mail.ts';

export interface ProductsTable {
  id: Generated<number>;
  name: string;
  sku: string;
  price: string;
  created_at: string;
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

/** A row of `Table` as a query reads it (generated columns filled in). Row types derive from here, never copied. */
export type Row<Table extends keyof Database> = Selectable<Database[Table]>;

/** A row of `Table` as an insert writes it (generated columns left to the database). */
export type NewRow<Table extends keyof Database> = Insertable<Database[Table]>;
