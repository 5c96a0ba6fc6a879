// Table types for Kysely. Conventions on both databases (see docs/architecture.md):
// times are ISO 8601 UTC strings (`2026-01-31T12:00:00.000Z`, fixed width so they sort as text),
// flags are integers 0/1, lists and objects are JSON text.
import type { Generated } from 'kysely';

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

export interface Database {
  events: EventsTable;
  users: UsersTable;
  teams: TeamsTable;
  memberships: MembershipsTable;
  personal_access_tokens: PersonalAccessTokensTable;
  products: ProductsTable;
}
