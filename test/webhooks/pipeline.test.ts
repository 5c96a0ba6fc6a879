// The delivery worker's pipeline as a receiver and the delivery log see it: a slot is freed when
// its attempt ends (results are written afterwards, in batches), rows are claimed ahead of the
// free slots, and still nothing is lost or attempted twice at once.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { webhookDeliveryTask } from '../../src/webhooks/delivery-worker.ts';
import { startWorker } from '../../src/worker/worker.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { webhookFixture, type WebhookFixture } from './setup.ts';
import { eventually } from '../support/wait.ts';
import { spawnSvc, stop, workerProcessSuite } from './processes.ts';
import { testPki } from '../support/tls.ts';

const member = (i: number) => ({ user_id: i, email: `u${i}@example.com`, role: 'member' });

describe('delivery pipeline: shutdown', () => {
  let f: WebhookFixture;
  let r: Receiver;
  before(async () => {
    f = await webhookFixture({ SERVICE_WEBHOOKS_CONCURRENCY: '8' });
    r = await startReceiver();
  });
  after(async () => {
    await f.close();
    await r.close();
  });
  const worker = async () => startWorker(f.t.ctx, [webhookDeliveryTask({ ca: (await testPki()).caPem })]);

  it('SIGTERM right after the last answer: the worker writes every finished result before it exits', async () => {
    const teamId = (await f.t.team(f.owner.id)).id;
    const sub = await f.createSubscription(r.url, ['*'], teamId);
    const before = r.received.length;
    for (let i = 0; i < 40; i++) await f.emit('team.member.added', member(i), teamId);
    const w = await spawnSvc(['worker'], f.t.env);
    try {
      await w.waitForLine(/svc worker running/);
      // Answered at once: when the last request arrives, most results are still waiting to be written.
      await r.waitFor(before + 40);
      w.child.kill('SIGTERM');
      assert.equal((await w.exited).code, 0, w.output());
    } finally {
      await stop(w, 'SIGKILL');
    }
    const rows = await f.deliveries(sub.id);
    assert.equal(rows.length, 40);
    assert.deepEqual(new Set(rows.map((row) => row.status)), new Set(['success']));
    assert.equal(r.received.length, before + 40, 'each event sent once');
  });

  it('a stop with attempts in flight waits for them and writes their results', async () => {
    const teamId = (await f.t.team(f.owner.id)).id;
    const sub = await f.createSubscription(r.url, ['*'], teamId);
    r.answer = () => ({ status: 200, delayMs: 400 });
    const before = r.received.length;
    for (let i = 0; i < 8; i++) await f.emit('team.member.added', member(i), teamId);
    const w = await worker();
    await r.waitFor(before + 8);
    await w.stop();
    r.answer = () => ({});
    const rows = await f.deliveries(sub.id);
    assert.deepEqual(
      rows.map((row) => [row.status, row.status_code]),
      Array(8).fill(['success', 200]),
    );
  });

  it('rows claimed ahead but not started are given back at a stop: another worker sends them at once', async () => {
    // One slot, a slow receiver: the worker holds the first event in flight and the others claimed.
    const one = await webhookFixture({ SERVICE_WEBHOOKS_CONCURRENCY: '1' });
    const slow = await startReceiver();
    try {
      slow.answer = () => ({ status: 200, delayMs: 500 });
      const sub = await one.createSubscription(slow.url);
      const ids = new Set<string>();
      for (let i = 0; i < 6; i++) ids.add((await one.emit('team.member.added', member(i)))!);
      const ca = (await testPki()).caPem;
      const first = startWorker(one.t.ctx, [webhookDeliveryTask({ ca })]);
      await slow.waitFor(1);
      await first.stop();
      const afterStop = await one.deliveries(sub.id);
      assert.equal(
        afterStop.filter((row) => row.status === 'success').length,
        1,
        'the attempt in flight finished and was recorded',
      );
      assert.equal(afterStop.filter((row) => row.status === 'pending').length, 5);
      assert.equal(slow.received.length, 1, 'nothing started after the stop');
      // The lease is 20 s: the rest goes out now only because the first worker released them.
      slow.answer = () => ({});
      const stoppedAt = Date.now();
      const second = startWorker(one.t.ctx, [webhookDeliveryTask({ ca })]);
      const rows = await eventually(
        async () => {
          const all = await one.deliveries(sub.id);
          return all.every((row) => row.status === 'success') && all;
        },
        10_000,
        'every event delivered by the second worker',
      );
      await second.stop();
      assert.ok(Date.now() - stoppedAt < 10_000);
      assert.equal(rows.length, 6);
      assert.deepEqual(new Set(slow.received.map((g) => JSON.parse(g.body).id)), ids);
      assert.equal(slow.received.length, 6, 'each event sent once');
    } finally {
      await one.close();
      await slow.close();
    }
  });
});

describe('delivery pipeline: claim ahead', () => {
  it('a worker whose receiver is slow holds few rows (the floor of 16 ahead of its slot) and leaves the rest unleased for other workers', async () => {
    // One slot, answers in 100 ms: about 10 attempts a second, so 20 ms of attempts (the buffer's
    // size under load) is far less than a row and the buffer stays at its floor. A buffer sized by
    // a count that grows with the backlog would lease most of the 60 rows to this worker.
    const one = await webhookFixture({ SERVICE_WEBHOOKS_CONCURRENCY: '1' });
    const slow = await startReceiver();
    try {
      slow.answer = () => ({ status: 200, delayMs: 100 });
      const sub = await one.createSubscription(slow.url);
      for (let i = 0; i < 60; i++) await one.emit('team.member.added', member(i));
      const leased = async () => {
        const row = await one.t.ctx.db.kysely
          .selectFrom('webhook_deliveries')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('subscription_id', '=', sub.id)
          .where('status', '=', 'pending')
          .where('locked_until', '>', new Date().toISOString())
          .executeTakeFirstOrThrow();
        return Number(row.n);
      };
      const worker = startWorker(one.t.ctx, [webhookDeliveryTask({ ca: (await testPki()).caPem })]);
      const seen: number[] = [];
      try {
        await slow.waitFor(1);
        // Over 1.5 s (about 15 attempts, six of the worker's 250 ms rate windows).
        for (const until = Date.now() + 1500; Date.now() < until;) {
          seen.push(await leased());
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      } finally {
        await worker.stop();
      }
      // Leased: the rows ahead, the attempt, and finished attempts whose results wait for their
      // batched write (a few ms; at 10 attempts a second one or two, a few more if the test
      // machine stalls a write). A worker that hoarded would hold most of the 60.
      assert.ok(
        Math.max(...seen) <= 16 + 1 + 5,
        `at most 16 rows ahead, the slot and results being written leased at once; seen ${seen.join(' ')}`,
      );
      assert.ok(Math.max(...seen) > 1, `rows were claimed ahead of the slot; seen ${seen.join(' ')}`);
      assert.ok(
        slow.received.length >= 5 && slow.received.length < 60,
        `the worker was sending throughout; ${slow.received.length} sent`,
      );
    } finally {
      await one.close();
      await slow.close();
    }
  });
});

describe('delivery pipeline: crash with results unwritten', () => {
  const LEASE_SECONDS = 6;
  const suite = workerProcessSuite({
    SERVICE_WEBHOOKS_DELIVERY_TIMEOUT: '2',
    SERVICE_WEBHOOKS_LEASE_SECONDS: String(LEASE_SECONDS),
  });

  it('a worker killed after its attempts but before their results are written: every event is sent again after the lease', async () => {
    const { f, r, worker } = suite;
    const sub = await f.createSubscription(r.url);
    const db = f.t.ctx.db.kysely;
    let release!: () => void;
    let lockerPid = 0;
    // Answers are held long enough for the test to lock the delivery rows, so the worker's result
    // writes wait behind the lock when it is killed.
    r.answer = () => ({ status: 200, delayMs: 300 });
    const ids = new Set<string>();
    for (let i = 0; i < 10; i++) ids.add((await f.emit('team.member.added', member(i)))!);
    const first = await worker();
    await r.waitFor(10);
    const locked = new Promise<void>((resolveLocked) => {
      void db.transaction().execute(async (trx) => {
        await trx
          .updateTable('webhook_deliveries')
          .set((eb) => ({ attempt: eb.ref('attempt') }))
          .where('subscription_id', '=', sub.id)
          .execute();
        if (f.t.ctx.db.dialect === 'postgres') {
          lockerPid = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx)).rows[0].pid;
        }
        resolveLocked();
        await new Promise<void>((resolve) => (release = resolve));
      });
    });
    await locked;
    // The answers (300 ms) come back while the rows are locked; then the worker dies.
    await new Promise((resolve) => setTimeout(resolve, 800));
    const killedAt = Date.now();
    await stop(first, 'SIGKILL');
    if (f.t.ctx.db.dialect === 'postgres') {
      // A PostgreSQL backend does not notice its client's death while it waits on a lock: the dead
      // worker's write would still run once the lock goes. Its connections go down with it here,
      // as they would with its machine. Only the backends waiting on this test's own lock: other test
      // files share the database and may be waiting on locks of their own.
      await sql`select pg_terminate_backend(pid) from pg_stat_activity
        where datname = current_database() and ${lockerPid} = any(pg_blocking_pids(pid))`.execute(db);
    }
    release();
    const leased = await f.deliveries(sub.id);
    assert.ok(
      leased.every((row) => row.status === 'pending'),
      'no result was written before the crash',
    );
    await worker();
    const rows = await eventually(
      async () => {
        const all = await f.deliveries(sub.id);
        return all.length === 10 && all.every((row) => row.status === 'success') && all;
      },
      30_000,
      'every event delivered again',
    );
    assert.ok(Date.now() - killedAt >= (LEASE_SECONDS - 2) * 1000, 'sent again only after the lease expired');
    assert.deepEqual(new Set(rows.map((row) => row.event_id)), ids);
    const counts = new Map<string, number>();
    for (const g of r.received) counts.set(JSON.parse(g.body).id, (counts.get(JSON.parse(g.body).id) ?? 0) + 1);
    assert.deepEqual(
      [...ids].map((id) => counts.get(id)),
      Array(10).fill(2),
      'each event arrived twice: at least once, as documented',
    );
  });
});
