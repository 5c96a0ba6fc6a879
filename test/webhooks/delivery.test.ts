import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bearer } from '../helpers/app.ts';
import { verifyWebhookSignature } from '../../src/webhooks/verify.ts';
import { startReceiver, type Receiver } from './receiver.ts';
import { eventually, webhookFixture, type WebhookFixture } from './setup.ts';

describe('webhook delivery', () => {
  let f: WebhookFixture;
  let receiver: Receiver;
  before(async () => {
    f = await webhookFixture();
    receiver = await startReceiver();
    await f.startWorker();
  });
  after(async () => {
    await f.close();
    await receiver.close();
  });

  it('delivers a signed envelope with exact fields', async () => {
    const sub = await f.createSubscription(receiver.url, ['team.member.added']);
    const eventId = await f.emit('team.member.added', { user_id: 42, email: 'new@example.com', role: 'member' });
    const [got] = await receiver.waitFor(1);
    const now = Math.floor(Date.now() / 1000);
    const header = String(got.headers['x-service-signature']);
    const t = Number(/^t=(\d+),v1=[0-9a-f]{64}$/.exec(header)?.[1]);
    assert.ok(Math.abs(now - t) <= 5, header);
    assert.equal(verifyWebhookSignature(sub.secret, header, got.body), true);
    assert.equal(verifyWebhookSignature('wrong', header, got.body), false);
    assert.equal(got.headers['content-type'], 'application/json');
    const body = JSON.parse(got.body);
    assert.deepEqual(Object.keys(body).sort(), ['api_version', 'created_at', 'data', 'id', 'team_id', 'type']);
    assert.equal(body.id, eventId);
    assert.match(body.id, /^evt_[0-9a-f-]{36}$/);
    assert.equal(body.api_version, 'v1');
    assert.equal(body.team_id, f.teamId);
    assert.equal(body.type, 'team.member.added');
    assert.deepEqual(body.data, { user_id: 42, email: 'new@example.com', role: 'member' });
    const rows = await eventually(async () => {
      const r = await f.deliveries(sub.id);
      return r[0]?.status === 'success' && r;
    });
    assert.equal(rows.length, 1);
    assert.equal(rows[0].status_code, 200);
    assert.equal(rows[0].next_retry_at, null);
  });
});
