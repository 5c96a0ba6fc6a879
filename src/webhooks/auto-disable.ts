// The auto-disable: the failure that brings a subscription to SERVICE_WEBHOOKS_AUTO_DISABLE_AFTER
// consecutive failures turns it off, in the transaction that writes that failure (results.ts), with
// an audit entry, a log line and an e-mail to the team's owners. A receiver's 410 Gone (it says the
// endpoint is gone for good) turns it off the same way at once.
import type { Transaction } from 'kysely';
import type { AppContext } from '../app-context.ts';
import { SYSTEM_ACTOR } from '../audit/actor.ts';
import { recordAudit } from '../audit/record.ts';
import type { Database } from '../db/schema.ts';
import { queueMail } from '../mail/outbox.ts';
import { nowIso } from '../util/time.ts';
import { webhookLog } from './log.ts';

/** Why: `failures` consecutive failed attempts, or a 410 Gone answer (`gone`). */
export type DisableCause = { failures: number; gone?: false } | { failures: number; gone: true };

/** Disables the subscription unless it already is; true when this call disabled it. */
export async function autoDisable(
  ctx: AppContext,
  trx: Transaction<Database>,
  subscriptionId: string,
  counted: { team_id: string; url: string },
  cause: DisableCause,
): Promise<boolean> {
  const now = nowIso();
  const failures = cause.failures;
  const reason = cause.gone
    ? 'Disabled automatically: the endpoint answered 410 Gone.'
    : `Disabled automatically after ${failures} consecutive failed delivery attempts.`;
  const disabled = await trx
    .updateTable('webhook_subscriptions')
    .set({ is_active: 0, disabled_at: now, disabled_reason: reason, updated_at: now })
    .where('id', '=', subscriptionId)
    .where('is_active', '=', 1)
    .executeTakeFirst();
  if (Number(disabled.numUpdatedRows) === 0) return false;
  const data = {
    is_active: { before: true, after: false },
    reason,
    consecutive_failures: failures,
    ...(cause.gone ? { status_code: 410 } : {}),
  };
  await recordAudit(trx, SYSTEM_ACTOR, {
    teamId: counted.team_id,
    action: 'webhook.subscription.disabled',
    targetId: subscriptionId,
    data,
  });
  webhookLog(ctx).warn(
    {
      event: 'webhook.subscription.disabled',
      subscription_id: subscriptionId,
      team_id: counted.team_id,
      consecutive_failures: failures,
      ...(cause.gone ? { status_code: 410 } : {}),
    },
    'webhook.subscription.disabled',
  );
  const owners = await trx
    .selectFrom('memberships as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .innerJoin('teams as t', 't.id', 'm.team_id')
    .select(['u.email', 't.name'])
    .where('m.team_id', '=', counted.team_id)
    .where('m.role', '=', 'owner')
    .where('u.is_active', '=', 1)
    .execute();
  if (owners.length === 0) return true;
  await queueMail(ctx, trx, {
    to: owners.map((o) => o.email),
    subject: `Webhook disabled for ${owners[0].name}`,
    text: [
      cause.gone
        ? `The webhook endpoint ${counted.url} of your team ${owners[0].name} answered 410 Gone (the endpoint no longer exists),`
        : `The webhook endpoint ${counted.url} of your team ${owners[0].name} failed ${failures} delivery attempts in a row,`,
      'so it has been disabled and receives no more events.',
      '',
      `Fix the endpoint, then re-enable it with PATCH /api/v1/teams/${counted.team_id}/webhooks/${subscriptionId}/ {"is_active": true}.`,
      'Events that failed meanwhile are in its delivery log as dead letters and can be retried.',
    ].join('\n'),
  });
  return true;
}
