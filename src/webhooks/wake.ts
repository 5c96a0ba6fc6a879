// How delivery workers learn that rows are due: in this process an event on ctx.wake, in every
// other process a PostgreSQL NOTIFY on WAKE_CHANNEL (workers LISTEN on it; SQLite workers poll).
import type { AppContext } from '../app-context.ts';

/** PostgreSQL channel notified (delivered at commit) when delivery rows are queued. */
export const WAKE_CHANNEL = 'svc_webhooks';

/** The ctx.wake event that starts this process's delivery worker. */
export const WAKE_EVENT = 'webhooks';

/**
 * Wakes the delivery workers after a committed insert outside the event outbox (a retry, a test
 * delivery). Never rejects: a lost wake-up only costs the poll interval.
 */
export async function wakeDeliveryWorkers(ctx: Pick<AppContext, 'wake' | 'db'>): Promise<void> {
  ctx.wake.emit(WAKE_EVENT);
  if (ctx.db.dialect === 'postgres') await ctx.db.pool?.query('select pg_notify($1, $2)', [WAKE_CHANNEL, '']).catch(() => {});
}
