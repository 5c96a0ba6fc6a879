// recordAudit(): the one way a service records a change to a team. It runs in the caller's
// transaction, so the entry exists exactly when the change is committed (a refused or failed change
// rolls its entry back with it). Entries are only ever inserted: nothing updates one, and only the
// retention purge (store.ts) deletes them.
import type { Executor } from '../db/schema.ts';
import { nowIso } from '../util/time.ts';
import { AUDIT_ACTIONS, type AuditAction } from './actions.ts';
import type { Actor } from './actor.ts';

/** A field's value before and after the change. */
export interface Change<T = unknown> {
  before: T;
  after: T;
}

export interface AuditInput {
  teamId: string;
  action: AuditAction;
  /** The id of the action's target (its type is the registry's). */
  targetId: string | number;
  /** Before/after of the changed fields, or the facts of a creation or removal; never a secret. */
  data: Record<string, unknown>;
}

export async function recordAudit(executor: Executor, actor: Actor, input: AuditInput): Promise<void> {
  await executor
    .insertInto('audit_entries')
    .values({
      team_id: input.teamId,
      occurred_at: nowIso(),
      action: input.action,
      actor_type: actor.type,
      actor_id: actor.id,
      actor_email: actor.email,
      credential_type: actor.credential?.type ?? null,
      credential_id: actor.credential?.id ?? null,
      target_type: AUDIT_ACTIONS[input.action].target,
      target_id: String(input.targetId),
      ip: actor.context.ip,
      user_agent: actor.context.user_agent,
      request_id: actor.context.request_id,
      data: JSON.stringify(input.data),
    })
    .execute();
}

/**
 * The before/after of each field whose value differs (compared as JSON, so lists compare by
 * content); an empty object when nothing changed.
 */
export function changedFields<T extends Record<string, unknown>>(before: T, after: Partial<T>): Record<string, Change> {
  const changed: Record<string, Change> = {};
  for (const [field, value] of Object.entries(after)) {
    if (value === undefined) continue;
    if (JSON.stringify(before[field]) !== JSON.stringify(value))
      changed[field] = { before: before[field], after: value };
  }
  return changed;
}
