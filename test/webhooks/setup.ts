// Shared setup for webhook tests: a real app with webhooks on, a team with an owner holding a
// webhooks token, and helpers to emit events inside a transaction and run a real worker.
import assert from 'node:assert/strict';
import { bearer, startApp, type TestApp } from '../support/app.ts';
import type { EventInput, EventType } from '../../src/events/index.ts';
import { webhookDeliveryTask } from '../../src/webhooks/delivery-worker.ts';
import { startWorker, type RunningWorker } from '../../src/worker/worker.ts';
import { testPki } from '../support/tls.ts';

export const FAST_RETRIES = '0,0.2,0.2,0.2,0.2,0.2';

export interface WebhookFixture {
  t: TestApp;
  owner: { id: number; email: string };
  token: string;
  teamId: string;
  createSubscription(url: string, events?: string[], teamId?: string): Promise<{ id: string; secret: string }>;
  emit(type: EventType, data: Record<string, unknown>, teamId?: string): Promise<string | null>;
  startWorker(): Promise<RunningWorker>;
  deliveries(subscriptionId: string): Promise<
    {
      id: number;
      event_id: string;
      attempt: number;
      status: string;
      status_code: number | null;
      next_retry_at: string | null;
      response_body: string | null;
      created_at: string;
    }[]
  >;
  close(): Promise<void>;
}

export async function webhookFixture(env: Record<string, string> = {}): Promise<WebhookFixture> {
  const t = await startApp({
    SERVICE_WEBHOOKS_ENABLED: 'true',
    SERVICE_WEBHOOKS_ALLOWED_CIDRS: '127.0.0.1/32',
    SERVICE_WEBHOOKS_RETRY_DELAYS: FAST_RETRIES,
    SERVICE_WEBHOOKS_DELIVERY_TIMEOUT: '3',
    // Long enough for claim-ahead (claim-sizing.ts claimAhead): the tests exercise the buffer.
    SERVICE_WEBHOOKS_LEASE_SECONDS: '20',
    ...env,
  });
  const owner = await t.user();
  const token = await t.token(owner.id, ['webhooks:manage']);
  const team = await t.team(owner.id);
  const workers: RunningWorker[] = [];
  return {
    t,
    owner,
    token,
    teamId: team.id,
    async createSubscription(url, events = ['*'], teamId = team.id) {
      const res = await t.inject({
        method: 'POST',
        url: `/api/v1/teams/${teamId}/webhooks/`,
        headers: bearer(token),
        payload: { url, events },
      });
      assert.equal(res.statusCode, 201, res.body);
      return res.json();
    },
    async emit(type, data, teamId = team.id) {
      // Any data, as a test may send what no emitting code does (the registry types only real callers).
      const [event] = await t.ctx.db.kysely
        .transaction()
        .execute((trx) => t.ctx.events.emit(trx, { type, teamId, data } as EventInput));
      return event?.id ?? null;
    },
    async startWorker() {
      const { caPem } = await testPki();
      const worker = startWorker(t.ctx, [webhookDeliveryTask({ ca: caPem })]);
      workers.push(worker);
      return worker;
    },
    async deliveries(subscriptionId) {
      const rows = await t.ctx.db.kysely
        .selectFrom('webhook_deliveries')
        .select(['id', 'event_id', 'attempt', 'status', 'status_code', 'next_retry_at', 'response_body', 'created_at'])
        .where('subscription_id', '=', subscriptionId)
        .orderBy('id')
        .execute();
      return rows.map((r) => ({ ...r, id: Number(r.id) }));
    },
    async close() {
      await Promise.all(workers.map((w) => w.stop()));
      await t.close();
    },
  };
}
