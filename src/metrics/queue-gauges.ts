// The webhook queue as a scrape sees it: how many deliveries are pending, and how long the most overdue
// one has waited past its due time. Read when a scrape collects them, never on a request or a delivery:
// one statement along the partial index of pending rows (webhook_deliveries_due_idx), which holds only
// the backlog. Each process that serves metrics reports the same figures, those of the whole database.
import { Gauge, type Registry } from '@prometheus-io/client';
import { sql } from 'kysely';
import type { AppContext } from '../app-context.ts';

export function queueGauges(ctx: Pick<AppContext, 'db'>, registers: Registry[]): void {
  let reading: Promise<void> | null = null;
  const depth = new Gauge({
    name: 'webhook_pending_deliveries',
    help: 'Webhook deliveries waiting to be attempted: due now, leased by a worker, or scheduled as a retry.',
    registers,
    // Both gauges come from the one statement, read by whichever of them is collected first.
    collect: () => (reading ??= read().finally(() => (reading = null))),
  });
  const age = new Gauge({
    name: 'webhook_oldest_pending_delivery_age_seconds',
    help: 'How long the most overdue pending webhook delivery has waited past its due time (0: none is overdue).',
    registers,
    collect: () => reading ?? undefined,
  });
  async function read(): Promise<void> {
    try {
      const row = (
        await sql<{
          pending: number | string;
          oldest: string | null;
        }>`select count(*) as pending, min(next_retry_at) as oldest
          from webhook_deliveries where status = 'pending'`.execute(ctx.db.kysely)
      ).rows[0];
      depth.set(Number(row.pending));
      age.set(row.oldest === null ? 0 : Math.max(0, (Date.now() - Date.parse(row.oldest)) / 1000));
    } catch {
      // The database does not answer (the readiness probe says so too): no figure rather than a stale one.
      depth.set(Number.NaN);
      age.set(Number.NaN);
    }
  }
}
