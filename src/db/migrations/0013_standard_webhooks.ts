import type { Kysely } from 'kysely';
import { flag } from './helpers.ts';

// Per subscription: whether deliveries also carry the Standard Webhooks headers (webhook-id,
// webhook-timestamp, webhook-signature). On by default, existing subscriptions included; a
// subscription turns them off for a receiver that rejects unknown headers.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webhook_subscriptions').addColumn('standard_webhooks', 'integer', flag(1)).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webhook_subscriptions').dropColumn('standard_webhooks').execute();
}
