// `svc worker` with SERVICE_WORKER_METRICS_PORT: a real worker process serves its own GET /metrics
// (same token rule as the HTTP app's), and its counters are those of the work it did: a delivery it
// made shows there, not in the HTTP app's process.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { cli } from '../cli/cli-helpers.ts';
import { bearer } from '../support/app.ts';
import { spawnSvc, stop, type Svc } from '../webhooks/processes.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { webhookFixture, type WebhookFixture } from '../webhooks/setup.ts';
import { eventually } from '../support/wait.ts';
import { METRICS_TOKEN, parseExposition } from './exposition.ts';

describe('svc worker: its own metrics endpoint', () => {
  let f: WebhookFixture;
  let receiver: Receiver;
  let worker: Svc;
  let url: string;

  before(async () => {
    f = await webhookFixture({ SERVICE_METRICS_TOKEN: METRICS_TOKEN });
    receiver = await startReceiver();
    worker = await spawnSvc(['worker'], { ...f.t.env, SERVICE_WORKER_METRICS_PORT: '0' });
    url = (await worker.waitForLine(/svc worker metrics on (http:\/\/127\.0\.0\.1:\d+\/metrics)\n/))[1];
  });
  after(async () => {
    if (worker) await stop(worker);
    await receiver?.close();
    await f?.close();
  });

  async function scrape() {
    const res = await fetch(url, { headers: bearer(METRICS_TOKEN) });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
    return parseExposition(await res.text());
  }

  it('asks for the token: 401 without it or with a wrong one, 404 and 405 elsewhere', async () => {
    for (const headers of [{}, bearer(`${METRICS_TOKEN}0`), { authorization: `Basic ${METRICS_TOKEN}` }]) {
      const res = await fetch(url, { headers });
      assert.equal(res.status, 401);
      assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="metrics"');
      assert.equal(res.headers.get('content-type'), 'application/problem+json');
      assert.equal((await res.json()).status, 401);
    }
    const other = await fetch(url.replace('/metrics', '/healthz'), { headers: bearer(METRICS_TOKEN) });
    assert.equal(other.status, 404);
    assert.equal((await other.json()).status, 404);
    const post = await fetch(url, { method: 'POST', headers: bearer(METRICS_TOKEN) });
    assert.equal(post.status, 405);
    assert.equal(post.headers.get('allow'), 'GET, HEAD');
    await post.body?.cancel();
  });

  it('serves the process defaults and the queue, and counts the deliveries this process made', async () => {
    const start = await scrape();
    assert.ok(start.types.has('process_cpu_seconds_total'));
    assert.ok(start.types.has('nodejs_eventloop_lag_seconds'));
    assert.equal(start.get('webhook_deliveries_total', { outcome: 'success' }), 0);
    assert.equal(start.get('webhook_pending_deliveries'), 0);
    assert.equal(start.types.has('http_request_duration_seconds'), true);

    const sub = await f.createSubscription(receiver.url);
    await f.emit('user.profile.updated', {
      user_id: 1,
      changed_fields: ['display_name'],
      updated_at: new Date().toISOString(),
    });
    await receiver.waitFor(1, 30_000);
    await eventually(
      async () => (await f.deliveries(sub.id)).every((r) => r.status === 'success'),
      30_000,
      'the delivery written',
    );
    const done = await scrape();
    assert.equal(done.get('webhook_deliveries_total', { outcome: 'success' }), 1);
    assert.equal(done.get('webhook_delivery_duration_seconds_count'), 1);
    assert.equal(done.get('webhook_pending_deliveries'), 0);
    // The HTTP app's process made no delivery: its own counter did not move.
    const app = parseExposition((await f.t.inject({ url: '/metrics', headers: bearer(METRICS_TOKEN) })).body);
    assert.equal(app.get('webhook_deliveries_total', { outcome: 'success' }), 0);
  });

  it('stops on SIGTERM', async () => {
    const exited = await stop(worker);
    assert.equal(exited.code, 0, worker.output());
    await assert.rejects(fetch(url));
  });
});

describe('SERVICE_WORKER_METRICS_PORT without SERVICE_METRICS_TOKEN', () => {
  it('is a configuration error naming both settings', async () => {
    const result = await cli(
      { NODE_ENV: 'test', DATABASE_URL: 'sqlite::memory:', SERVICE_WORKER_METRICS_PORT: '9464' },
      ['worker'],
    );
    assert.equal(result.code, 1);
    assert.match(result.stderr, /^svc: configuration error: SERVICE_WORKER_METRICS_PORT needs SERVICE_METRICS_TOKEN/);
  });

  it('a token that is too short or has spaces is refused', async () => {
    for (const token of ['short', 'has a space in it 0123456789']) {
      const result = await cli({ NODE_ENV: 'test', DATABASE_URL: 'sqlite::memory:', SERVICE_METRICS_TOKEN: token }, [
        'migrate',
      ]);
      assert.equal(result.code, 1);
      assert.match(result.stderr, /^svc: configuration error: SERVICE_METRICS_TOKEN must be 16 to 256/);
    }
  });
});
