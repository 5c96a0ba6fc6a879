// Users, their sessions, e-mail keys, TOTP and failure records (src/accounts/).
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
