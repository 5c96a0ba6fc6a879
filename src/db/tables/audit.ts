// The team audit log (src/audit/).
import type { Generated } from 'kysely';

/** Inserted in the change's transaction, never updated. */
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
