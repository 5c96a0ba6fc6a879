// Teams, memberships and invitations (src/teams/).
import type { Generated } from 'kysely';

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
  /** The team's name and is_active, copied by the database's triggers (migration 0016); never written here. */
  team_name: Generated<string>;
  team_active: Generated<number>;
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
