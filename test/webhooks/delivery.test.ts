import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FIXTURE_ACTOR, bearer } from '../support/app.ts';
import { EVENT_TYPES } from '../../src/events/index.ts';
import { runCli } from '../../src/main.ts';
import { setTeamActive } from '../../src/teams/teams.ts';
import { webhookDeliveryTask } from '../../src/webhooks/delivery-worker.ts';
import { webhookLogPurgeTask } from '../../src/webhooks/log-purge.ts';
import { loadConfig } from '../../src/config.ts';
import { outcomeOf, purgeDeliveryLogs, type AttemptResult } from '../../src/webhooks/queue.ts';
import { verifyWebhookSignature } from '../../src/webhooks/verify.ts';
import { startWorker } from '../../src/worker/worker.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { webhookFixture, type WebhookFixture } from './setup.ts';
import { eventually } from '../support/wait.ts';
import { testPki } from '../support/tls.ts';

const memberAdded = { user_id: 42, email: 'new@example.com', role: 'member' };

describe('webhook delivery', () => {
  let f: WebhookFixture;
  const receivers: Receiver[] = [];
  async function receiver() {
    const r = await startReceiver();
    receivers.push(r);
    return r;
  }
  /** A fresh team (the 10-subscription cap is per team). */
  async function team() {
    return (await f.t.team(f.owner.id)).id;
  }
  const settled = (subscriptionId: string, count: number) =>
    eventually(
      async () => {
        const rows = await f.deliveries(subscriptionId);
        return rows.length >= count && rows.every((r) => r.status !== 'pending') && rows;
      },
      30_000,
      `${count} settled deliveries`,
    );

  before(async () => {
    f = await webhookFixture();
    await f.startWorker();
  });
  after(async () => {
    await f.close();
    await Promise.all(receivers.map((r) => r.close()));
  });

  it('delivers a signed envelope with exact fields, for each event type', async () => {
    const r = await receiver();
    const teamId = await team();
    const sub = await f.createSubscription(r.url, ['*'], teamId);
    const events = [
      ['team.member.added', memberAdded],
      [
        'team.invitation.created',
        { ...EVENT_TYPES['team.invitation.created'].example, email: 'x@example.com', role: 'admin' },
      ],
      ['user.profile.updated', { user_id: 7, changed_fields: ['first_name'], updated_at: '2026-01-01T00:00:00.000Z' }],
    ] as const;
    const ids: (string | null)[] = [];
    for (const [type, data] of events) ids.push(await f.emit(type, { ...data }, teamId));
    const got = await r.waitFor(3);
    const byId = new Map(got.map((g) => [JSON.parse(g.body).id as string | null, g] as const));
    for (const [i, [type, data]] of events.entries()) {
      const g = byId.get(ids[i])!;
      assert.ok(g, `event ${type} received`);
      const now = Math.floor(Date.now() / 1000);
      const header = String(g.headers['x-service-signature']);
      const match = /^t=(\d+),v1=[0-9a-f]{64}$/.exec(header);
      assert.ok(match, header);
      assert.ok(Math.abs(now - Number(match[1])) <= 5);
      assert.equal(verifyWebhookSignature(sub.secret, header, g.body), true);
      assert.equal(verifyWebhookSignature(sub.secret, header, g.body + ' '), false);
      assert.equal(g.headers['content-type'], 'application/json');
      assert.match(String(g.headers['user-agent']), /^svc-webhooks\//);
      const body = JSON.parse(g.body);
      assert.deepEqual(Object.keys(body).sort(), ['api_version', 'created_at', 'data', 'id', 'team_id', 'type']);
      // A UUIDv7: its first 48 bits are the event's creation time in milliseconds (docs/webhooks.md).
      // The id and created_at are two reads of the clock, one after the other; on a loaded machine the
      // process can be preempted between them (11 ms seen), so the bound is loose: a random or
      // differently ordered id would be off by years.
      const id = /^evt_([0-9a-f]{8})-([0-9a-f]{4})-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.exec(body.id);
      assert.ok(id, body.id);
      assert.ok(
        Math.abs(parseInt(id[1] + id[2], 16) - Date.parse(body.created_at)) <= 1000,
        `${body.id} ${body.created_at}`,
      );
      assert.equal(body.api_version, 'v1');
      assert.equal(body.team_id, teamId);
      assert.equal(body.type, type);
      assert.match(body.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.deepEqual(body.data, data);
    }
    const rows = await settled(sub.id, 3);
    assert.deepEqual(
      rows.map((row) => [row.status, row.status_code, row.next_retry_at, row.attempt]),
      Array(3).fill(['success', 200, null, 1]),
    );
  });

  it('keeps an answer with NUL bytes in the log (NUL shown as U+FFFD) and settles the row', async () => {
    const r = await receiver();
    r.answer = () => ({ status: 200, body: 'ok\u0000done' });
    const teamId = await team();
    const sub = await f.createSubscription(r.url, ['*'], teamId);
    await f.emit('team.member.added', memberAdded, teamId);
    const [row] = await settled(sub.id, 1);
    assert.equal(row.status, 'success');
    assert.equal(row.response_body, 'ok\uFFFDdone');
  });

  it('a dispatch wakes the worker at once (no waiting for the 1 s poll)', async () => {
    const r = await receiver();
    const teamId = await team();
    await f.createSubscription(r.url, ['*'], teamId);
    const latencies: number[] = [];
    for (let i = 0; i < 15; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20 + Math.random() * 60));
      const started = Date.now();
      await f.emit('team.member.added', memberAdded, teamId);
      await r.waitFor(i + 1);
      latencies.push(Date.now() - started);
    }
    latencies.sort((a, b) => a - b);
    // Polling alone would give a median near 500 ms.
    assert.ok(latencies[7] < 250, `median ${latencies[7]} ms (${latencies.join(', ')})`);
  });

  it("sends only the subscribed types and only to the event's team", async () => {
    const r = await receiver();
    const teamId = await team();
    const other = await team();
    const sub = await f.createSubscription(r.url, ['team.invitation.created'], teamId);
    await f.emit('team.member.added', memberAdded, teamId);
    await f.emit('team.invitation.created', EVENT_TYPES['team.invitation.created'].example, other);
    const wanted = await f.emit('team.invitation.created', EVENT_TYPES['team.invitation.created'].example, teamId);
    await r.waitFor(1);
    await settled(sub.id, 1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(r.received.length, 1);
    assert.equal(JSON.parse(r.received[0].body).id, wanted);
    assert.equal((await f.deliveries(sub.id)).length, 1);
  });

  it('retries 500, 302, timeout and a dropped connection, dead-letters the 6th failure, and a manual retry restarts at attempt 1', async () => {
    const r = await receiver();
    const teamId = await team();
    const answers = [
      { status: 500, body: 'boom'.repeat(400) },
      { status: 302, headers: { location: 'https://127.0.0.1:1/elsewhere' } },
      { delayMs: 4500 },
      { destroy: true },
      { status: 503 },
      { status: 400 },
    ];
    r.answer = (_req, index) => answers[index] ?? { status: 200 };
    const sub = await f.createSubscription(r.url, ['*'], teamId);
    const eventId = await f.emit('team.member.added', memberAdded, teamId);
    const rows = await settled(sub.id, 6);
    assert.equal(rows.length, 6);
    assert.deepEqual(
      rows.map((row) => row.attempt),
      [1, 2, 3, 4, 5, 6],
    );
    assert.deepEqual(
      rows.map((row) => row.status),
      ['failed', 'failed', 'failed', 'failed', 'failed', 'dead_letter'],
    );
    assert.deepEqual(
      rows.map((row) => row.status_code),
      [500, 302, null, null, 503, 400],
    );
    assert.equal(rows[0].response_body!.length, 1024, 'only the first 1 KB of the response is kept');
    assert.match(rows[2].response_body!, /timed out/i);
    // Failed rows carry the next attempt's time: the attempt time plus the schedule's delay (0.2 s here).
    for (const row of rows.slice(0, 5)) assert.equal(Date.parse(row.next_retry_at!) - Date.parse(row.created_at), 200);
    for (let i = 1; i < 6; i++)
      assert.ok(rows[i].created_at >= rows[i - 1].next_retry_at!, 'no attempt before it is due');
    assert.equal(rows[5].next_retry_at, null);
    // Every attempt sent the same bytes; the signature's timestamp is per attempt.
    const bodies = new Set(r.received.slice(0, 6).map((g) => g.body));
    assert.equal(bodies.size, 1);
    assert.equal(JSON.parse([...bodies][0]).id, eventId);
    for (const g of r.received)
      assert.equal(verifyWebhookSignature(sub.secret, String(g.headers['x-service-signature']), g.body), true);
    // The redirect target was never requested.
    assert.ok(r.received.every((g) => g.path === '/hook'));

    const other = await f.t.inject({
      method: 'POST',
      url: `/api/v1/teams/${teamId}/webhooks/${sub.id}/logs/${rows[4].id}/retry/`,
      headers: bearer(f.token),
    });
    assert.equal(other.statusCode, 409, 'a failed (not dead) entry cannot be retried');
    const retry = await f.t.inject({
      method: 'POST',
      url: `/api/v1/teams/${teamId}/webhooks/${sub.id}/logs/${rows[5].id}/retry/`,
      headers: bearer(f.token),
    });
    assert.equal(retry.statusCode, 202, retry.body);
    assert.equal(retry.json().attempt, 1);
    assert.equal(retry.json().status, 'pending');
    assert.equal(retry.json().event_id, eventId);
    const again = await f.t.inject({
      method: 'POST',
      url: `/api/v1/teams/${teamId}/webhooks/${sub.id}/logs/${rows[5].id}/retry/`,
      headers: bearer(f.token),
    });
    assert.equal(again.statusCode, 409, 'a dead letter already retried cannot start a second cycle');
    const after = await settled(sub.id, 7);
    assert.equal(after.length, 7);
    assert.deepEqual([after[6].attempt, after[6].status, after[6].status_code], [1, 'success', 200]);
    assert.equal(r.received[6].body, r.received[0].body);
  });

  it('a refused connection fails every attempt; `svc webhooks retry --all-dead` restarts the dead letters', async () => {
    const r = await receiver();
    const port = r.port;
    await r.close();
    const teamId = await team();
    const sub = await f.createSubscription(`https://127.0.0.1:${port}/hook`, ['*'], teamId);
    await f.emit('team.member.added', memberAdded, teamId);
    await f.emit('team.member.added', { ...memberAdded, user_id: 43 }, teamId);
    const rows = await settled(sub.id, 12);
    assert.equal(rows.length, 12);
    for (const row of rows) {
      assert.equal(row.status_code, null);
      assert.match(row.response_body!, /ECONNREFUSED/);
    }
    assert.equal(rows.filter((row) => row.status === 'dead_letter').length, 2);

    const out: string[] = [];
    const err: string[] = [];
    const io = { out: (s: string) => out.push(s), err: (s: string) => err.push(s) };
    assert.equal(
      await runCli(['webhooks', 'retry', '--subscription', sub.id], f.t.env, io),
      2,
      'needs --log or --all-dead',
    );
    assert.equal(await runCli(['webhooks', 'retry', '--subscription', 'nope', '--all-dead'], f.t.env, io), 2);
    assert.equal(
      await runCli(['webhooks', 'retry', '--subscription', sub.id, '--log', String(rows[0].id)], f.t.env, io),
      1,
      'a failed entry is refused',
    );
    // Bring a receiver up on that port so the fresh cycles can succeed.
    const back = await receiver();
    await f.t.inject({
      method: 'PATCH',
      url: `/api/v1/teams/${teamId}/webhooks/${sub.id}/`,
      headers: bearer(f.token),
      payload: { url: back.url },
    });
    assert.equal(
      await runCli(['webhooks', 'retry', '--subscription', sub.id, '--all-dead'], f.t.env, io),
      0,
      err.join('\n'),
    );
    assert.match(out.at(-1)!, /^2 dead letters queued/);
    const done = await settled(sub.id, 14);
    assert.deepEqual(
      done.slice(12).map((row) => [row.attempt, row.status]),
      [
        [1, 'success'],
        [1, 'success'],
      ],
    );
    assert.equal(back.received.length, 2);
  });

  it('rotate-secret: deliveries carry the new and the old signature during the overlap', async () => {
    const r = await receiver();
    const teamId = await team();
    const sub = await f.createSubscription(r.url, ['*'], teamId);
    const rotated = await f.t.inject({
      method: 'POST',
      url: `/api/v1/teams/${teamId}/webhooks/${sub.id}/rotate-secret/`,
      headers: bearer(f.token),
    });
    assert.equal(rotated.statusCode, 200);
    const secret = rotated.json().secret;
    assert.notEqual(secret, sub.secret);
    assert.equal(Buffer.from(secret, 'base64').length, 32);
    await f.emit('team.member.added', memberAdded, teamId);
    const [got] = await r.waitFor(1);
    const header = String(got.headers['x-service-signature']);
    assert.match(header, /^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    const [, first, second] = header.split(',');
    const t = header.split(',')[0];
    assert.equal(verifyWebhookSignature(secret, `${t},${first}`, got.body), true, 'the first v1 is the new secret');
    assert.equal(
      verifyWebhookSignature(sub.secret, `${t},${second}`, got.body),
      true,
      'the second v1 is the old secret',
    );
  });

  it('inactive subscriptions and teams get no attempts: their due rows are dead-lettered unsent', async () => {
    const r = await receiver();
    const teamId = await team();
    const sub = await f.createSubscription(r.url, ['*'], teamId);
    // The first attempt fails; before the retry is due the team is deactivated.
    r.answer = () => {
      void setTeamActive(f.t.ctx.db.kysely, teamId, false, FIXTURE_ACTOR);
      return { status: 500 };
    };
    await f.emit('team.member.added', memberAdded, teamId);
    const rows = await settled(sub.id, 2);
    assert.deepEqual(
      rows.map((row) => row.status),
      ['failed', 'dead_letter'],
    );
    assert.equal(rows[1].status_code, null);
    assert.match(rows[1].response_body!, /Not sent: the team is inactive/);
    assert.equal(r.received.length, 1);
    // An inactive team's events create nothing.
    assert.equal(
      await f
        .emit('team.member.added', memberAdded, teamId)
        .then(() => f.deliveries(sub.id))
        .then((d) => d.length),
      2,
    );
    await setTeamActive(f.t.ctx.db.kysely, teamId, true, FIXTURE_ACTOR);

    // Same for a subscription switched off between attempts.
    const r2 = await receiver();
    const team2 = await team();
    const sub2 = await f.createSubscription(r2.url, ['*'], team2);
    r2.answer = () => {
      void f.t.inject({
        method: 'PATCH',
        url: `/api/v1/teams/${team2}/webhooks/${sub2.id}/`,
        headers: bearer(f.token),
        payload: { is_active: false },
      });
      return { status: 500 };
    };
    await f.emit('team.member.added', memberAdded, team2);
    const rows2 = await settled(sub2.id, 2);
    assert.match(rows2[1].response_body!, /Not sent: the subscription is inactive/);
    assert.equal(r2.received.length, 1);
    await f.emit('team.member.added', memberAdded, team2);
    assert.equal((await f.deliveries(sub2.id)).length, 2, 'an inactive subscription gets no new rows');
  });

  it('DELETE stops pending deliveries', async () => {
    const r = await receiver();
    const teamId = await team();
    const sub = await f.createSubscription(r.url, ['*'], teamId);
    let deleted: Promise<{ statusCode: number; body: string }> | undefined;
    r.answer = () => {
      deleted ??= f.t.inject({
        method: 'DELETE',
        url: `/api/v1/teams/${teamId}/webhooks/${sub.id}/`,
        headers: bearer(f.token),
      });
      return { status: 500 };
    };
    await f.emit('team.member.added', memberAdded, teamId);
    await r.waitFor(1);
    const answer = await deleted!;
    assert.equal(answer.statusCode, 204, answer.body);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.equal(r.received.length, 1);
    assert.equal((await f.deliveries(sub.id)).length, 0);
  });

  it('the test endpoint queues a real signed delivery with data.test to that subscription only', async () => {
    const r = await receiver();
    const r2 = await receiver();
    const teamId = await team();
    const sub = await f.createSubscription(r.url, ['team.invitation.created', 'user.profile.updated'], teamId);
    await f.createSubscription(r2.url, ['*'], teamId);
    const bad = await f.t.inject({
      method: 'POST',
      url: `/api/v1/teams/${teamId}/webhooks/${sub.id}/test/`,
      headers: bearer(f.token),
      payload: { event_type: 'team.member.added' },
    });
    assert.equal(bad.statusCode, 400);
    const res = await f.t.inject({
      method: 'POST',
      url: `/api/v1/teams/${teamId}/webhooks/${sub.id}/test/`,
      headers: bearer(f.token),
      payload: {},
    });
    assert.equal(res.statusCode, 202, res.body);
    const entry = res.json();
    assert.equal(entry.status, 'pending');
    assert.equal(entry.event_type, 'team.invitation.created');
    const testData = { ...EVENT_TYPES['team.invitation.created'].example, test: true };
    assert.deepEqual(entry.payload.data, testData);
    const [got] = await r.waitFor(1);
    assert.equal(JSON.parse(got.body).id, entry.event_id);
    assert.deepEqual(JSON.parse(got.body).data, testData);
    assert.equal(verifyWebhookSignature(sub.secret, String(got.headers['x-service-signature']), got.body), true);
    await settled(sub.id, 1);
    assert.equal(r2.received.length, 0);
    await f.t.inject({
      method: 'PATCH',
      url: `/api/v1/teams/${teamId}/webhooks/${sub.id}/`,
      headers: bearer(f.token),
      payload: { is_active: false },
    });
    const inactive = await f.t.inject({
      method: 'POST',
      url: `/api/v1/teams/${teamId}/webhooks/${sub.id}/test/`,
      headers: bearer(f.token),
    });
    assert.equal(inactive.statusCode, 409);
  });
});

describe('the default retry schedule', () => {
  it('waits 30 s, 2 min, 15 min, 1 h, 4 h between attempts and dead-letters the 6th failure', () => {
    const settings = loadConfig({}).webhooks;
    const at = '2026-01-01T00:00:00.000Z';
    const result = (attempt: number, ok = false): AttemptResult => ({
      delivery: {
        id: 1,
        subscription_id: 's',
        event_id: 'e',
        event_type: 't',
        payload: '{}',
        attempt,
        lease_token: 'x',
      },
      ok,
      attempted: true,
      statusCode: ok ? 200 : 500,
      responseBody: null,
      durationMs: 1,
      attemptedAt: at,
    });
    const delays = [1, 2, 3, 4, 5].map(
      (n) => (Date.parse(outcomeOf(result(n), settings).nextRetryAt!) - Date.parse(at)) / 1000,
    );
    assert.deepEqual(delays, [30, 120, 900, 3600, 14400]);
    assert.deepEqual(outcomeOf(result(6), settings), { status: 'dead_letter', nextRetryAt: null });
    assert.deepEqual(outcomeOf(result(3, true), settings), { status: 'success', nextRetryAt: null });
    assert.equal(settings.retryDelays[0], 0, 'the first attempt is immediate');
  });
});

describe('webhook worker housekeeping', () => {
  let f: WebhookFixture;
  let r: Receiver;
  before(async () => {
    f = await webhookFixture();
    r = await startReceiver();
  });
  after(async () => {
    await f.close();
    await r.close();
  });

  it('stops gracefully: an attempt in flight at SIGTERM finishes and is recorded', async () => {
    const { caPem } = await testPki();
    const worker = startWorker(f.t.ctx, [webhookDeliveryTask({ ca: caPem })]);
    r.answer = () => ({ status: 200, delayMs: 700 });
    const sub = await f.createSubscription(r.url);
    await f.emit('team.member.added', memberAdded);
    await r.waitFor(1);
    await worker.stop();
    const rows = await f.deliveries(sub.id);
    assert.deepEqual(
      rows.map((row) => row.status),
      ['success'],
    );
    // Stopped: a new event stays pending.
    await f.emit('team.member.added', memberAdded);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal((await f.deliveries(sub.id))[1].status, 'pending');
  });

  it('purges finished log rows and events older than the retention, keeps pending rows and recent events', async () => {
    const sub = await f.createSubscription(r.url);
    const db = f.t.ctx.db.kysely;
    const old = '2020-01-01T00:00:00.000Z';
    const base = {
      subscription_id: sub.id,
      event_type: 'team.member.added',
      payload: '{}',
      attempt: 1,
      created_at: old,
    };
    await db
      .insertInto('webhook_deliveries')
      .values([
        { ...base, event_id: 'evt_old_success', status: 'success' },
        { ...base, event_id: 'evt_old_dead', status: 'dead_letter' },
        { ...base, event_id: 'evt_old_pending', status: 'pending', next_retry_at: '2999-01-01T00:00:00.000Z' },
        { ...base, event_id: 'evt_new', status: 'success', created_at: new Date().toISOString() },
      ])
      .execute();
    // Events too, team by team: more than one chunk (1,000) of old ones, and a recent one that stays.
    const event = { type: 'team.member.added', api_version: 'v1', team_id: f.teamId, data: '{}' };
    const oldEvents = Array.from({ length: 1_001 }, (_, i) => ({ ...event, id: `evt_purged_${i}`, created_at: old }));
    for (let i = 0; i < oldEvents.length; i += 500)
      await db
        .insertInto('events')
        .values(oldEvents.slice(i, i + 500))
        .execute();
    await db
      .insertInto('events')
      .values({ ...event, id: 'evt_recent', created_at: new Date().toISOString() })
      .execute();
    assert.deepEqual(await purgeDeliveryLogs(db, 30), { deliveries: 2, events: 1_001 });
    const left = (
      await db.selectFrom('webhook_deliveries').select('event_id').where('subscription_id', '=', sub.id).execute()
    ).map((x) => x.event_id);
    assert.ok(left.includes('evt_old_pending') && left.includes('evt_new'));
    assert.ok(!left.includes('evt_old_success') && !left.includes('evt_old_dead'));
    const events = (await db.selectFrom('events').select('id').where('team_id', '=', f.teamId).execute()).map(
      (x) => x.id,
    );
    assert.ok(events.includes('evt_recent'));
    assert.ok(!events.some((id) => id.startsWith('evt_purged_')));
    // The worker task does it on start.
    await db
      .insertInto('webhook_deliveries')
      .values({ ...base, event_id: 'evt_old_2', status: 'failed' })
      .execute();
    const worker = startWorker(f.t.ctx, [webhookLogPurgeTask]);
    await eventually(
      async () =>
        !(await db
          .selectFrom('webhook_deliveries')
          .select('id')
          .where('event_id', '=', 'evt_old_2')
          .executeTakeFirst()),
    );
    await worker.stop();
  });
});
