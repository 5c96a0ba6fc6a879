// Personal access tokens, JWT signing keys and refresh tokens (src/tokens/).
import type { Generated } from 'kysely';

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
