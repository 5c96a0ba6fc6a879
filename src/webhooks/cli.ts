// `svc webhooks retry`: the operator's way to replay dead letters (the API's retry endpoint, for
// one entry or every dead letter of a subscription).
import { cliActor } from '../audit/actor.ts';
import { UsageError, optional, required, type Command } from '../cli/framework.ts';
import { ConflictError, NotFoundError } from '../util/domain-errors.ts';
import { isUuid } from '../util/uuid.ts';
import { retryAllDeadLetters, retryDeadLetter } from './queue.ts';
import { wakeDeliveryWorkers } from './wake.ts';

const webhooksRetry: Command = {
  path: ['webhooks', 'retry'],
  usage: 'svc webhooks retry --subscription ID (--log LOG_ID | --all-dead)',
  summary: "Restarts a subscription's dead letters (one, or all) at attempt 1.",
  options: { subscription: { type: 'string' }, log: { type: 'string' }, 'all-dead': { type: 'boolean' } },
  async run(values, { open }, io) {
    const subscriptionId = required(values, 'subscription');
    const logId = optional(values, 'log');
    const allDead = values['all-dead'] === true;
    if (!isUuid(subscriptionId)) throw new UsageError('--subscription must be a subscription UUID');
    if ((logId === undefined) === !allDead) throw new UsageError('give exactly one of --log LOG_ID and --all-dead');
    if (logId !== undefined && !/^\d{1,15}$/.test(logId))
      throw new UsageError('--log must be a log entry id (an integer)');
    const ctx = await open();
    if (!ctx.config.webhooksEnabled)
      throw new ConflictError('webhooks are disabled on this service (SERVICE_WEBHOOKS_ENABLED)');
    const subscription = await ctx.db.kysely
      .selectFrom('webhook_subscriptions')
      .select(['id', 'team_id', 'is_active'])
      .where('id', '=', subscriptionId.toLowerCase())
      .executeTakeFirst();
    if (!subscription) throw new NotFoundError(`no webhook subscription with id ${subscriptionId}`);
    if (subscription.is_active !== 1)
      throw new ConflictError('the subscription is inactive; re-enable it before retrying');
    const count = await ctx.db.kysely.transaction().execute(async (trx) => {
      const actor = cliActor('webhooks retry');
      if (allDead) return retryAllDeadLetters(trx, subscription.id, actor, subscription.team_id);
      const queued = await retryDeadLetter(trx, subscription.id, Number(logId), actor, subscription.team_id);
      if (!queued) throw new NotFoundError(`the subscription has no log entry ${logId}`);
      return 1;
    });
    await wakeDeliveryWorkers(ctx);
    io.out(`${count} dead letter${count === 1 ? '' : 's'} queued for a fresh delivery cycle`);
  },
};

export const webhookCommands: Command[] = [webhooksRetry];
