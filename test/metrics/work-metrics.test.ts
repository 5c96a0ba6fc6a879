// The metrics of the service's background work, each moved by exactly what a known run did: webhook
// deliveries by outcome and their durations (a real worker POSTing to the tests' HTTPS receiver), the
// pending-delivery gauges, mail by outcome (the outbox's own sender), and SNS messages by type and
// result (signed notifications from the SES fixtures, through the local SNS stand-in).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { queueMail, sendQueuedMail } from '../../src/mail/outbox.ts';
import { intakeNetwork } from '../../src/mail/intake.ts';
import { bearer, startApp, type TestApp } from '../support/app.ts';
import {
  AIA_URL,
  CERT_URL,
  StandIn,
  TOPIC,
  buildPki,
  fixture,
  issue,
  notification,
  type Pki,
} from '../mail/sns-stand-in.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { webhookFixture, type WebhookFixture } from '../webhooks/setup.ts';
import { eventually } from '../support/wait.ts';
import type { RunningWorker } from '../../src/worker/worker.ts';
import { METRICS_TOKEN, parseExposition, type Exposition } from './exposition.ts';

async function scrape(t: TestApp): Promise<Exposition> {
  const res = await t.inject({ url: '/metrics', headers: bearer(METRICS_TOKEN) });
  assert.equal(res.statusCode, 200, res.body);
  return parseExposition(res.body);
}

describe('webhook delivery metrics', () => {
  let f: WebhookFixture;
  let receiver: Receiver;
  let worker: RunningWorker | null = null;
  before(async () => {
    f = await webhookFixture({ SERVICE_METRICS_TOKEN: METRICS_TOKEN, SERVICE_WEBHOOKS_MAX_RETRIES: '2' });
    receiver = await startReceiver();
  });
  after(async () => {
    await f.close();
    await receiver.close();
  });

  const settled = (subscriptionId: string, count: number) =>
    eventually(
      async () => {
        const rows = await f.deliveries(subscriptionId);
        return rows.length >= count && rows.every((r) => r.status !== 'pending') && rows;
      },
      30_000,
      `${count} settled deliveries`,
    );

  it('the pending depth and the wait of the most overdue delivery, read at scrape time', async () => {
    const sub = await f.createSubscription(receiver.url);
    const start = await scrape(f.t);
    assert.equal(start.get('webhook_pending_deliveries'), 0);
    assert.equal(start.get('webhook_oldest_pending_delivery_age_seconds'), 0);
    // No worker runs yet: two deliveries wait, one of them due for 90 s already, one due in an hour.
    await f.emit('user.profile.updated', {
      user_id: 1,
      changed_fields: ['display_name'],
      updated_at: new Date().toISOString(),
    });
    await f.emit('user.profile.updated', {
      user_id: 2,
      changed_fields: ['display_name'],
      updated_at: new Date().toISOString(),
    });
    const [first, second] = await f.deliveries(sub.id);
    const at = (seconds: number) => new Date(Date.now() + seconds * 1000).toISOString();
    await f.t.ctx.db.kysely
      .updateTable('webhook_deliveries')
      .set({ next_retry_at: at(-90) })
      .where('id', '=', first.id)
      .execute();
    await f.t.ctx.db.kysely
      .updateTable('webhook_deliveries')
      .set({ next_retry_at: at(3600) })
      .where('id', '=', second.id)
      .execute();
    const waiting = await scrape(f.t);
    assert.equal(waiting.get('webhook_pending_deliveries'), 2);
    const age = waiting.get('webhook_oldest_pending_delivery_age_seconds');
    assert.ok(age >= 90 && age < 150, String(age));

    const before = await scrape(f.t);
    worker = await f.startWorker();
    await receiver.waitFor(1);
    await eventually(
      async () => (await f.deliveries(sub.id)).find((r) => r.id === first.id && r.status === 'success'),
      30_000,
      'the due delivery',
    );
    await f.t.ctx.db.kysely.deleteFrom('webhook_deliveries').where('id', '=', second.id).execute();
    const done = await scrape(f.t);
    assert.equal(done.get('webhook_pending_deliveries'), 0);
    assert.equal(done.get('webhook_oldest_pending_delivery_age_seconds'), 0);
    assert.equal(
      done.get('webhook_deliveries_total', { outcome: 'success' }) -
        before.get('webhook_deliveries_total', { outcome: 'success' }),
      1,
    );
    assert.equal(
      done.get('webhook_delivery_duration_seconds_count') - before.get('webhook_delivery_duration_seconds_count'),
      1,
    );
    await f.t.ctx.db.kysely.deleteFrom('webhook_subscriptions').where('id', '=', sub.id).execute();
  });

  it('counts each attempt by outcome: success, failed (retried), dead_letter, not_sent', async () => {
    const failing = await startReceiver();
    failing.answer = () => ({ status: 500 });
    try {
      const good = await f.createSubscription(receiver.url, ['team.member.added']);
      const bad = await f.createSubscription(failing.url, ['team.invitation.created']);
      const gone = await f.createSubscription(receiver.url, ['user.profile.updated']);
      const before = await scrape(f.t);
      const seen = receiver.received.length;
      // Queued while no worker runs; `gone` is disabled before its delivery is attempted.
      await worker?.stop();
      await f.emit('team.member.added', { user_id: 3, email: 'm3@example.com', role: 'member' });
      await f.emit('team.member.added', { user_id: 4, email: 'm4@example.com', role: 'member' });
      await f.emit('team.invitation.created', {
        invitation_id: '5f0c6f1e-2b7d-4c8e-9a31-0d4e8b7c6a52',
        email: 'grace@example.com',
        role: 'admin',
        invited_by: 1,
        expires_at: new Date().toISOString(),
      });
      await f.emit('user.profile.updated', {
        user_id: 5,
        changed_fields: ['display_name'],
        updated_at: new Date().toISOString(),
      });
      await f.t.ctx.db.kysely
        .updateTable('webhook_subscriptions')
        .set({ is_active: 0 })
        .where('id', '=', gone.id)
        .execute();
      worker = await f.startWorker();
      await settled(good.id, 2);
      await settled(bad.id, 2);
      await settled(gone.id, 1);
      const after = await scrape(f.t);
      const moved = (outcome: string) =>
        after.get('webhook_deliveries_total', { outcome }) - before.get('webhook_deliveries_total', { outcome });
      assert.equal(moved('success'), 2);
      assert.equal(moved('failed'), 1, 'attempt 1 of 2 failed: retried');
      assert.equal(moved('dead_letter'), 1, 'attempt 2 of 2 failed');
      assert.equal(moved('not_sent'), 1);
      assert.equal(receiver.received.length - seen, 2);
      assert.equal(failing.received.length, 2);
      // Durations of the attempts that were sent (four), not of the one that was not.
      assert.equal(
        after.get('webhook_delivery_duration_seconds_count') - before.get('webhook_delivery_duration_seconds_count'),
        4,
      );
      const values = after.samples.flatMap((s) => Object.values(s.labels)).join(' ');
      for (const id of [good.id, bad.id, gone.id, f.teamId, f.owner.email]) assert.ok(!values.includes(id), id);
    } finally {
      await failing.close();
    }
  });
});

describe('mail metrics', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp({ SERVICE_METRICS_TOKEN: METRICS_TOKEN });
  });
  after(() => t.close());

  it('counts each message as sent, suppressed or failed', async () => {
    const now = new Date().toISOString();
    await t.ctx.db.kysely
      .insertInto('mail_suppressions')
      .values({ email: 'bounced@example.com', reason: 'bounce', event_key: 'evt-1', occurred_at: now, created_at: now })
      .execute();
    const before = await scrape(t);
    await t.ctx.db.kysely.transaction().execute(async (trx) => {
      await queueMail(t.ctx, trx, { to: 'reader@example.com', subject: 'Hello', text: 'one' });
      await queueMail(t.ctx, trx, { to: ['reader@example.com', 'other@example.com'], subject: 'Hello', text: 'two' });
      await queueMail(t.ctx, trx, { to: 'bounced@example.com', subject: 'Hello', text: 'three' });
      await queueMail(t.ctx, trx, { to: 'not an address', subject: 'Hello', text: 'four' });
    });
    assert.equal(await sendQueuedMail(t.ctx), 2);
    const after = await scrape(t);
    const moved = (outcome: string) =>
      after.get('mail_messages_total', { outcome }) - before.get('mail_messages_total', { outcome });
    assert.equal(moved('sent'), 2);
    assert.equal(moved('suppressed'), 1);
    assert.equal(moved('failed'), 1);
    const values = after.samples.flatMap((s) => Object.values(s.labels)).join(' ');
    assert.ok(!values.includes('@'));
  });
});

describe('SNS notification metrics', () => {
  let pki: Pki;
  let standIn: StandIn;
  let t: TestApp;
  before(async () => {
    pki = await buildPki();
    const tlsCert = await issue({
      subject: 'CN=sns.us-east-1.amazonaws.com',
      issuer: pki.root,
      dnsNames: ['sns.us-east-1.amazonaws.com'],
    });
    standIn = new StandIn(pki.root.pem);
    await standIn.start(tlsCert);
    standIn.routes.set(CERT_URL.replace('https://', ''), { body: pki.signing.pem });
    standIn.routes.set(AIA_URL.replace('http://', ''), { body: Buffer.from(pki.intermediate.cert.rawData) });
    t = await startApp({
      SERVICE_METRICS_TOKEN: METRICS_TOKEN,
      SERVICE_MAILPROVIDER_WEBHOOK_ENABLED: 'true',
      SERVICE_MAILPROVIDER_TRUST_ANCHORS_FILE: pki.anchorsFile,
      SERVICE_MAILPROVIDER_TOPIC_ARN: TOPIC,
    });
    intakeNetwork(t.ctx).agents = standIn.agents();
  });
  after(async () => {
    await t.close();
    await standIn.stop();
  });

  const post = (body: unknown) =>
    t.inject({
      method: 'POST',
      url: '/webhooks/mailprovider/',
      headers: { 'content-type': 'text/plain; charset=UTF-8' },
      payload: typeof body === 'string' ? body : JSON.stringify(body),
    });

  it('counts each message by type (the SES event) and result', async () => {
    const before = await scrape(t);
    const bounce = notification(fixture('bounce-permanent-with-dsn.json'), pki.signing.privateKey);
    const complaint = notification(fixture('complaint-no-feedback-report.json'), pki.signing.privateKey);
    assert.deepEqual((await post(bounce)).json(), { status: 'recorded' });
    assert.deepEqual((await post(bounce)).json(), { status: 'duplicate' });
    assert.deepEqual((await post(complaint)).json(), { status: 'recorded' });
    assert.deepEqual((await post(notification('not json', pki.signing.privateKey))).json(), { status: 'ignored' });
    assert.equal((await post({ ...complaint, Signature: bounce.Signature })).statusCode, 403);
    assert.equal((await post('{"no": "envelope"')).statusCode, 400);
    const after = await scrape(t);
    const moved = (type: string, result: string) =>
      (after.value('sns_notifications_total', { type, result }) ?? 0) -
      (before.value('sns_notifications_total', { type, result }) ?? 0);
    assert.equal(moved('bounce', 'recorded'), 1);
    assert.equal(moved('bounce', 'duplicate'), 1);
    assert.equal(moved('complaint', 'recorded'), 1);
    assert.equal(moved('notification', 'ignored'), 1);
    assert.equal(moved('notification', 'refused'), 1);
    assert.equal(moved('unknown', 'invalid'), 1);
    const total = (x: Exposition) =>
      x.samples.filter((s) => s.name === 'sns_notifications_total').reduce((sum, s) => sum + s.value, 0);
    assert.equal(total(after) - total(before), 6);
    // The bounce suppressed its recipient; the address is in no label.
    const suppressed = await sql<{ email: string }>`select email from mail_suppressions`.execute(t.ctx.db.kysely);
    assert.ok(suppressed.rows.length >= 1);
    const values = after.samples.flatMap((s) => Object.values(s.labels)).join(' ');
    for (const { email } of suppressed.rows) assert.ok(!values.includes(email), email);
    assert.ok(!values.includes(bounce.MessageId));
  });
});
