// The registry of audit actions: every kind of change to a team that the audit log records, with
// what it means and what its entry's target is. Names follow the event naming (events/registry.ts):
// lowercase, dot-separated, `resource.sub_resource.action`. Recording an action that is not here
// does not type-check, and the audit-log API's `action` filter accepts exactly these names.

export type AuditTargetType = 'team' | 'user' | 'invitation' | 'webhook_subscription' | 'webhook_delivery';

export interface AuditActionDefinition {
  description: string;
  /** What the entry's `target` names. */
  target: AuditTargetType;
  /** What `data` holds (never a secret). */
  data: string;
}

/** Keeps the literal keys (a plain annotation would widen them to string). */
const define = <T extends Record<string, AuditActionDefinition>>(actions: T) => actions;

export const AUDIT_ACTIONS = define({
  'team.created': {
    description: 'A team was created',
    target: 'team',
    data: '`name`, `slug`, `owner_id` (its first owner)',
  },
  'team.updated': {
    description: 'A team was renamed or its slug changed',
    target: 'team',
    data: 'before/after of each changed field (`name`, `slug`)',
  },
  'team.deactivated': {
    description: 'A team was deactivated (svc team deactivate)',
    target: 'team',
    data: '`is_active` before/after',
  },
  'team.reactivated': {
    description: 'A deactivated team was made active again (svc team activate)',
    target: 'team',
    data: '`is_active` before/after',
  },
  'team.member.added': {
    description: 'A user joined the team (invitation accepted, or svc team add-member)',
    target: 'user',
    data: '`email`, `role`',
  },
  'team.member.role_changed': {
    description: "A member's role changed",
    target: 'user',
    data: '`email`, `role` before/after',
  },
  'team.member.removed': {
    description: 'A member was removed by someone else',
    target: 'user',
    data: '`email`, `role`',
  },
  'team.member.left': { description: 'A member left the team', target: 'user', data: '`email`, `role`' },
  'team.invitation.created': {
    description: 'An invitation was sent',
    target: 'invitation',
    data: '`email`, `role`, `expires_at`, `replaced` (the id of the pending invitation it replaced, or null)',
  },
  'team.invitation.revoked': {
    description: 'A pending invitation was revoked',
    target: 'invitation',
    data: '`email`, `role`',
  },
  'team.invitation.accepted': {
    description: 'An invitation was accepted',
    target: 'invitation',
    data: '`email`, `role`, `user_id` (who joined)',
  },
  'webhook.subscription.created': {
    description: 'A webhook subscription was created',
    target: 'webhook_subscription',
    data: '`url`, `events`',
  },
  'webhook.subscription.updated': {
    description: 'A webhook subscription was changed (url, events, enabled or disabled by a person)',
    target: 'webhook_subscription',
    data: 'before/after of each changed field (`url`, `events`, `is_active`)',
  },
  'webhook.subscription.deleted': {
    description: 'A webhook subscription was deleted',
    target: 'webhook_subscription',
    data: '`url`, `events`',
  },
  'webhook.subscription.disabled': {
    description: 'The service disabled a webhook subscription after consecutive failed deliveries',
    target: 'webhook_subscription',
    data: '`is_active` before/after, `reason`, `consecutive_failures`',
  },
  'webhook.secret_rotated': {
    description: "A webhook subscription's signing secret was rotated",
    target: 'webhook_subscription',
    data: '`previous_secret_expires_at` (never a secret)',
  },
  'webhook.delivery.retried': {
    description: "A dead letter was queued again, or a failed delivery's next attempt brought forward",
    target: 'webhook_delivery',
    data: '`subscription_id`, `event_id`, `event_type`, `retry_id` (the new or brought-forward log entry)',
  },
});

export type AuditAction = keyof typeof AUDIT_ACTIONS;

export const AUDIT_ACTION_NAMES = Object.keys(AUDIT_ACTIONS) as AuditAction[];

export function isAuditAction(name: string): name is AuditAction {
  return Object.hasOwn(AUDIT_ACTIONS, name);
}
