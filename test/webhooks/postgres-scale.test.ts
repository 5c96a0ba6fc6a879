// Two `svc worker` processes on PostgreSQL share the queue through FOR UPDATE SKIP LOCKED leases:
// every delivery is made, and none twice while both workers stay alive.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { webhookFixture, type WebhookFixture } from './setup.ts';
import { eventually } from '../support/wait.ts';
import { spawnSvc, stop, type Svc } from './processes.ts';

const EVENTS = 2000;
const RECEIVERS = 5;
const onPostgres = Boolean(process.env.TEST_DATABASE_URL);

describe(
  'PostgreSQL with two worker processes (skipped unless TEST_DATABASE_URL is set)',
  { skip: !onPostgres && 'needs TEST_DATABASE_URL' },
  () => {
    let f: WebhookFixture;
    const receivers: Receiver[] = [];
    const procs: Svc[] = [];
    before(async () => {
      if (!onPostgres) return;
      // The production timeout and a long lease: on a loaded CI machine a 2 s timeout could expire
      // after the receiver got the request, and the retry would (rightly) deliver it again.
      f = await webhookFixture({ SERVICE_WEBHOOKS_DELIVERY_TIMEOUT: '10', SERVICE_WEBHOOKS_LEASE_SECONDS: '60' });
      for (let i = 0; i < RECEIVERS; i++) receivers.push(await startReceiver());
    });
    after(async () => {
      if (!onPostgres) return;
      for (const p of procs) await stop(p, 'SIGKILL');
      await f.close();
      for (const r of receivers) await r.close();
    });

    it(
      `PostgreSQL only (skipped unless TEST_DATABASE_URL is set): ${EVENTS} events to ${RECEIVERS} receivers, all delivered, none twice`,
      { skip: !onPostgres, timeout: 290_000 },
      async () => {
        const subs = [];
        for (const r of receivers) subs.push(await f.createSubscription(r.url));
        for (let i = 0; i < 2; i++) {
          const p = await spawnSvc(['worker'], f.t.env);
          procs.push(p);
          await p.waitForLine(/svc worker running/);
        }
        const ids = new Set<string>();
        const db = f.t.ctx.db.kysely;
        // Events arrive in transactions of 50 while the workers already run.
        for (let batch = 0; batch < EVENTS / 50; batch++) {
          await db.transaction().execute(async (trx) => {
            for (let i = 0; i < 50; i++) {
              const [event] = await f.t.ctx.events.emit(trx, {
                type: 'team.member.added',
                teamId: f.teamId,
                data: { user_id: batch * 50 + i, email: `u${i}@example.com`, role: 'member' },
              });
              ids.add(event.id);
            }
          });
        }
        await eventually(async () => receivers.every((r) => r.received.length >= EVENTS), 240_000, 'all deliveries');
        await eventually(
          async () => {
            const { n } = await db
              .selectFrom('webhook_deliveries')
              .select((eb) => eb.fn.countAll<number>().as('n'))
              .where('status', '=', 'pending')
              .executeTakeFirstOrThrow();
            return Number(n) === 0;
          },
          60_000,
          'no pending row',
        );
        const statuses = await db
          .selectFrom('webhook_deliveries')
          .select(['status'])
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .groupBy('status')
          .execute();
        assert.deepEqual(
          statuses.map((s) => [s.status, Number(s.n)]),
          [['success', EVENTS * RECEIVERS]],
        );
        for (const r of receivers) {
          const seen = r.received.map((g) => JSON.parse(g.body).id as string);
          assert.equal(seen.length, EVENTS, 'no event delivered twice');
          assert.deepEqual(new Set(seen), ids, 'every event delivered');
        }
        const { n } = await db
          .selectFrom('webhook_deliveries')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow();
        assert.equal(Number(n), EVENTS * RECEIVERS, 'one row per delivery: no attempt was repeated');
        // Both workers stayed alive throughout.
        for (const p of procs) assert.equal(p.child.exitCode, null, p.output());
      },
    );
  },
);
