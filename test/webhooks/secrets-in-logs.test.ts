// The signing secret appears in the create and rotate responses and nowhere else: not in other
// responses (api.test.ts), and not in the logs of a real `svc serve` process at its most verbose,
// through creation, rotation, a delivery and a failing delivery.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { webhookFixture, type WebhookFixture } from './setup.ts';
import { eventually } from '../support/wait.ts';
import { spawnSvc, stop, type Svc } from './processes.ts';

describe('secrets never in logs', () => {
  let f: WebhookFixture;
  let r: Receiver;
  let serve: Svc;
  before(async () => {
    f = await webhookFixture();
    r = await startReceiver();
  });
  after(async () => {
    if (serve) await stop(serve, 'SIGKILL');
    await f.close();
    await r.close();
  });

  it('a trace-level svc serve logs requests and deliveries but no secret', async () => {
    serve = await spawnSvc(['serve'], { ...f.t.env, LOG_LEVEL: 'trace', PORT: '0', HOST: '127.0.0.1' });
    const [, base] = await serve.waitForLine(/svc listening on (http:\/\/127\.0\.0\.1:\d+)/);
    const call = async (method: string, path: string, body?: unknown) => {
      const headers: Record<string, string> = { authorization: `Bearer ${f.token}` };
      if (body !== undefined) headers['content-type'] = 'application/json';
      const res = await fetch(`${base}/api/v1/teams/${f.teamId}/webhooks/${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: await res.json() };
    };
    const created = await call('POST', '', { url: r.url, events: ['*'] });
    assert.equal(created.status, 201);
    const rotated = await call('POST', `${created.body.id}/rotate-secret/`);
    assert.equal(rotated.status, 200);
    r.answer = (_req, index) => (index === 0 ? { status: 500, body: 'nope' } : { status: 200 });
    assert.equal((await call('POST', `${created.body.id}/test/`, {})).status, 202);
    await r.waitFor(2, 20_000);
    await eventually(async () => (await f.deliveries(created.body.id)).some((row) => row.status === 'success'));
    const { code } = await stop(serve);
    assert.equal(code, 0);
    const output = serve.output();
    assert.match(output, /"req(uest)?_?id"|request_id/, 'requests were logged');
    assert.match(output, /SERVICE_WEBHOOKS_ALLOWED_CIDRS is set/, 'the relaxed guard is announced');
    for (const secret of [created.body.secret, rotated.body.secret]) {
      const bytes = Buffer.from(secret, 'base64');
      for (const form of [secret, bytes.toString('base64url'), bytes.toString('hex'), encodeURIComponent(secret)]) {
        assert.ok(!output.includes(form), 'a secret form appears in the logs');
      }
    }
  });
});
