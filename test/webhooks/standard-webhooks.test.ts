// Standard Webhooks (https://www.standardwebhooks.com): every delivery also carries webhook-id,
// webhook-timestamp and webhook-signature, verified here by the stock `standardwebhooks` library with
// `whsec_` + the secret the API showed, beside our own X-Service-Signature; a subscription can turn
// them off. Receivers' 410 Gone disables the subscription; Retry-After on a 429 or 503 delays the
// next attempt.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { bearer } from '../support/app.ts';
import { verifyWebhookSignature } from '../../src/webhooks/verify.ts';
import { startReceiver, type Received, type Receiver } from '../support/receiver.ts';
import { eventually } from '../support/wait.ts';
import { webhookFixture, type WebhookFixture } from './setup.ts';

const memberAdded = { user_id: 42, email: 'new@example.com', role: 'member' };
const STANDARD_HEADERS = ['webhook-id', 'webhook-timestamp', 'webhook-signature'];

/** The request's headers as the library takes them. */
const headersOf = (got: Received) =>
  Object.fromEntries(Object.entries(got.headers).map(([name, value]) => [name, String(value)]));
/** Whether the stock library accepts the delivery with `secret`. */
function standardVerifies(secret: string, body: string, got: Received): boolean {
  try {
    new Webhook(`whsec_${secret}`).verify(body, headersOf(got));
    return true;
  } catch {
    return false;
  }
}

describe('Standard Webhooks', () => {
  let f: WebhookFixture;
  const receivers: Receiver[] = [];
  async function receiver() {
    const r = await startReceiver();
    receivers.push(r);
    return r;
  }
  /** A subscription on a fresh team (the cap is per team). */
  async function subscribe(r: Receiver, body: Record<string, unknown> = {}, team?: string) {
    const teamId = team ?? (await f.t.team(f.owner.id)).id;
    const res = await f.t.inject({
      method: 'POST',
      url: `/api/v1/teams/${teamId}/webhooks/`,
      headers: bearer(f.token),
      payload: { url: r.url, events: ['*'], ...body },
    });
    assert.equal(res.statusCode, 201, res.body);
    return { teamId, ...(res.json() as { id: string; secret: string; standard_webhooks: boolean }) };
  }
  const path = (sub: { teamId: string; id: string }, rest = '') =>
    `/api/v1/teams/${sub.teamId}/webhooks/${sub.id}/${rest}`;

  before(async () => {
    f = await webhookFixture();
    await f.startWorker();
  });
  after(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await f.close();
  });

  it('a delivery verifies with the stock library (whsec_ + the secret) and with our own header; a tampered body fails both', async () => {
    const r = await receiver();
    const sub = await subscribe(r);
    assert.equal(sub.standard_webhooks, true, 'on by default');
    const eventId = await f.emit('team.member.added', memberAdded, sub.teamId);
    const [got] = await r.waitFor(1);
    assert.equal(got.headers['webhook-id'], eventId);
    assert.equal(JSON.parse(got.body).id, got.headers['webhook-id'], 'webhook-id is the envelope id');
    const t = /^t=(\d+),/.exec(String(got.headers['x-service-signature']))![1];
    assert.equal(got.headers['webhook-timestamp'], t, 'the same timestamp as t=');
    assert.match(String(got.headers['webhook-signature']), /^v1,[A-Za-z0-9+/]{43}=$/);
    assert.equal(standardVerifies(sub.secret, got.body, got), true);
    assert.equal(verifyWebhookSignature(sub.secret, got.headers['x-service-signature'] as string, got.body), true);

    const tampered = got.body.replace('new@example.com', 'evil@example.com');
    assert.notEqual(tampered, got.body);
    assert.equal(standardVerifies(sub.secret, tampered, got), false);
    assert.equal(verifyWebhookSignature(sub.secret, got.headers['x-service-signature'] as string, tampered), false);
    assert.equal(
      standardVerifies(Buffer.alloc(32, 7).toString('base64'), got.body, got),
      false,
      'another secret fails',
    );
  });

  it('the same webhook-id on every retry; after a rotation both secrets verify during the overlap', async () => {
    const r = await receiver();
    const sub = await subscribe(r);
    r.answer = (_request, index) => (index === 0 ? { status: 500 } : {});
    await f.emit('team.member.added', memberAdded, sub.teamId);
    const [first, retry] = await r.waitFor(2);
    assert.equal(retry.headers['webhook-id'], first.headers['webhook-id']);
    assert.equal(retry.body, first.body);
    assert.equal(standardVerifies(sub.secret, retry.body, retry), true);

    const rotated = await f.t.inject({ method: 'POST', url: path(sub, 'rotate-secret/'), headers: bearer(f.token) });
    assert.equal(rotated.statusCode, 200);
    const secret = rotated.json().secret as string;
    await f.emit('team.member.added', memberAdded, sub.teamId);
    const got = (await r.waitFor(3))[2];
    assert.match(String(got.headers['webhook-signature']), /^v1,\S{44} v1,\S{44}$/, 'two signatures, space-separated');
    assert.equal(standardVerifies(secret, got.body, got), true, 'the new secret verifies');
    assert.equal(standardVerifies(sub.secret, got.body, got), true, 'the old secret still verifies during the overlap');
    assert.equal(verifyWebhookSignature(secret, got.headers['x-service-signature'] as string, got.body), true);
    assert.equal(verifyWebhookSignature(sub.secret, got.headers['x-service-signature'] as string, got.body), true);
  });

  it('standard_webhooks: false sends none of the three headers and the same body; it can be turned back on', async () => {
    const on = await receiver();
    const off = await receiver();
    const subOn = await subscribe(on);
    const subOff = await subscribe(off, { standard_webhooks: false }, subOn.teamId);
    assert.equal(subOff.standard_webhooks, false);
    const read = await f.t.inject({ url: path(subOff), headers: bearer(f.token) });
    assert.equal(read.json().standard_webhooks, false, 'stored and returned');

    // One event of their team, delivered to both.
    await f.emit('team.member.added', memberAdded, subOn.teamId);
    const [withHeaders] = await on.waitFor(1);
    const [without] = await off.waitFor(1);
    for (const name of STANDARD_HEADERS) assert.equal(without.headers[name], undefined, name);
    assert.equal(without.body, withHeaders.body, 'the body is byte-identical');
    assert.equal(
      verifyWebhookSignature(subOff.secret, without.headers['x-service-signature'] as string, without.body),
      true,
    );

    const patched = await f.t.inject({
      method: 'PATCH',
      url: path(subOff),
      headers: bearer(f.token),
      payload: { standard_webhooks: true },
    });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.equal(patched.json().standard_webhooks, true);
    await f.emit('team.member.added', memberAdded, subOff.teamId);
    const again = (await off.waitFor(2))[1];
    assert.equal(standardVerifies(subOff.secret, again.body, again), true);

    const bad = await f.t.inject({
      method: 'PATCH',
      url: path(subOff),
      headers: bearer(f.token),
      payload: { standard_webhooks: 'yes' },
    });
    assert.equal(bad.statusCode, 400);
  });

  it('a 410 Gone disables the subscription at once, with a reason naming the 410 and a system audit entry', async () => {
    const r = await receiver();
    const sub = await subscribe(r);
    r.answer = () => ({ status: 410 });
    await f.emit('team.member.added', memberAdded, sub.teamId);
    const view = await eventually(
      async () => {
        const res = await f.t.inject({ url: path(sub), headers: bearer(f.token) });
        const json = res.json() as { is_active: boolean; disabled_reason: string; disabled_at: string | null };
        return !json.is_active && json;
      },
      20_000,
      'the subscription disabled',
    );
    assert.match(view.disabled_reason, /410 Gone/);
    assert.ok(view.disabled_at);
    const rows = await eventually(async () => {
      const all = await f.deliveries(sub.id);
      return all.every((row) => row.status !== 'pending') && all;
    });
    assert.equal(rows[0].status_code, 410);
    assert.equal(r.received.length, 1, 'nothing more is sent');
    const audit = await f.t.ctx.db.kysely
      .selectFrom('audit_entries')
      .selectAll()
      .where('team_id', '=', sub.teamId)
      .where('action', '=', 'webhook.subscription.disabled')
      .execute();
    assert.equal(audit.length, 1);
    assert.equal(audit[0].actor_type, 'system');
    assert.deepEqual(JSON.parse(audit[0].data), {
      is_active: { before: true, after: false },
      reason: view.disabled_reason,
      consecutive_failures: 1,
      status_code: 410,
    });
  });

  const nextAttemptDelay = async (subscriptionId: string) => {
    const [failed, next] = await eventually(
      async () => {
        const rows = await f.deliveries(subscriptionId);
        return rows.length >= 2 && rows[0].status === 'failed' && rows;
      },
      20_000,
      'the first attempt failed',
    );
    assert.equal(next.attempt, 2, 'the attempt count is unchanged');
    const delay = (Date.parse(failed.next_retry_at!) - Date.parse(failed.created_at)) / 1000;
    if (delay > 1)
      assert.deepEqual(
        [next.status, next.next_retry_at],
        ['pending', failed.next_retry_at],
        'the next attempt waits for that time',
      );
    return delay;
  };

  it('Retry-After (seconds or HTTP-date) on a 429 or 503 delays the next attempt, capped at 24 hours; elsewhere it is ignored', async () => {
    const cases: [status: number, header: (now: number) => string, expected: (delay: number) => boolean][] = [
      [429, () => '120', (delay) => delay === 120],
      [503, (now) => new Date(now + 3600_000).toUTCString(), (delay) => delay >= 3598 && delay <= 3601],
      [503, () => '999999', (delay) => delay === 86400],
      [500, () => '120', (delay) => delay < 1],
    ];
    for (const [status, header, expected] of cases) {
      const r = await receiver();
      const sub = await subscribe(r);
      r.answer = (_request, index) => (index === 0 ? { status, headers: { 'retry-after': header(Date.now()) } } : {});
      await f.emit('team.member.added', memberAdded, sub.teamId);
      const delay = await nextAttemptDelay(sub.id);
      assert.ok(expected(delay), `${status} Retry-After ${header(Date.now())}: next attempt after ${delay} s`);
    }
  });
});
