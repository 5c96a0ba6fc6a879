// Crash safety and graceful shutdown with real `svc worker` processes.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eventually } from '../support/wait.ts';
import { stop, workerProcessSuite } from './processes.ts';

const LEASE_SECONDS = 6;

describe('svc worker processes', () => {
  const suite = workerProcessSuite({
    SERVICE_WEBHOOKS_DELIVERY_TIMEOUT: '4',
    SERVICE_WEBHOOKS_LEASE_SECONDS: String(LEASE_SECONDS),
  });

  it('SIGKILL mid-delivery: another worker delivers every event after the lease expires; nothing is stuck', async () => {
    const { f, r, worker } = suite;
    const sub = await f.createSubscription(r.url);
    // Phase 1: the receiver holds every request open, so the first worker dies with all in flight.
    let phase = 1;
    r.answer = () => (phase === 1 ? { delayMs: 60_000 } : { status: 200 });
    const ids = new Set<string>();
    for (let i = 0; i < 20; i++)
      ids.add((await f.emit('team.member.added', { user_id: i, email: `u${i}@example.com`, role: 'member' }))!);
    const first = await worker();
    await r.waitFor(20);
    const killedAt = Date.now();
    assert.equal((await stop(first, 'SIGKILL')).signal, 'SIGKILL');
    phase = 2;
    const leased = await f.deliveries(sub.id);
    assert.ok(
      leased.every((row) => row.status === 'pending'),
      'the killed worker wrote no result',
    );
    await worker();
    const rows = await eventually(
      async () => {
        const all = await f.deliveries(sub.id);
        return all.length === 20 && all.every((row) => row.status === 'success') && all;
      },
      30_000,
      'every event delivered by the second worker',
    );
    assert.ok(Date.now() - killedAt >= (LEASE_SECONDS - 2) * 1000, 'reclaimed only after the lease expired');
    assert.deepEqual(new Set(rows.map((row) => row.event_id)), ids);
    const delivered = new Set(r.received.slice(20).map((g) => JSON.parse(g.body).id));
    assert.deepEqual(delivered, ids, 'the receiver saw every event at least once after the crash');
    const stuck = await f.t.ctx.db.kysely
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('status', '=', 'pending')
      .execute();
    assert.equal(stuck.length, 0);
  });

  it('SIGTERM: the worker takes no new rows, finishes the attempt in flight, and exits 0', async () => {
    const { f, r, worker } = suite;
    await suite.killWorkers();
    const teamId = (await f.t.team(f.owner.id)).id;
    const sub = await f.createSubscription(r.url, ['*'], teamId);
    r.answer = () => ({ status: 200, delayMs: 1500 });
    const before = r.received.length;
    const w = await worker();
    await f.emit('team.member.added', { user_id: 1, email: 'a@example.com', role: 'member' }, teamId);
    await r.waitFor(before + 1);
    w.child.kill('SIGTERM');
    await f.emit('team.member.added', { user_id: 2, email: 'b@example.com', role: 'member' }, teamId);
    const { code } = await w.exited;
    assert.equal(code, 0, w.output());
    const rows = await f.deliveries(sub.id);
    assert.deepEqual(
      rows.map((row) => row.status),
      ['success', 'pending'],
    );
    assert.equal(r.received.length, before + 1);
  });
});
