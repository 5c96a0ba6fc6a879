// The worker task that keeps the delivery log to SERVICE_WEBHOOKS_LOG_RETENTION_DAYS: finished
// delivery rows and events older than that are deleted, hourly (pending rows are the queue: kept).
import { periodic } from '../worker/periodic.ts';
import { webhookLog } from './log.ts';
import { purgeDeliveryLogs } from './queue.ts';

const PURGE_INTERVAL_MS = 3600_000;

export const webhookLogPurgeTask = periodic({
  name: 'webhook-log-purge',
  intervalMs: PURGE_INTERVAL_MS,
  async round(ctx) {
    const { deliveries, events } = await purgeDeliveryLogs(ctx.db.kysely, ctx.config.webhooks.logRetentionDays);
    if (deliveries + events > 0) webhookLog(ctx).info({ deliveries, events }, 'webhook delivery logs purged');
  },
  failed: (ctx, error) => webhookLog(ctx).error({ err: error }, 'webhook log purge failed'),
});
