// The OAuth 2.0 authorization server's storage (src/oauth/, migration 0008_oauth).
import type { Generated } from 'kysely';

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
