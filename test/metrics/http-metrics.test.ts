// GET /metrics as Prometheus scrapes it: the bearer token (401 without it or with a wrong one; 404
// when SERVICE_METRICS_TOKEN is unset), the exposition parsed, and each series moving by exactly what
// known requests did: request durations by route template (never a raw path), rate-limit refusals.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bearer, startApp, TEST_PASSWORD, type TestApp } from '../support/app.ts';
import { METRICS_TOKEN, parseExposition, type Exposition } from './exposition.ts';

let t: TestApp;
let off: TestApp;
let user: { id: number; email: string };
let token: string;
let teamId: string;

async function scrape(app: TestApp = t): Promise<Exposition> {
  const res = await app.inject({ url: '/metrics', headers: bearer(METRICS_TOKEN) });
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
  return parseExposition(res.body);
}

const duration = (route: string, status: number, method = 'GET') => ({ method, route, status_code: String(status) });
const count = (x: Exposition, route: string, status: number, method = 'GET') =>
  x.value('http_request_duration_seconds_count', duration(route, status, method)) ?? 0;

// The hooks live inside this describe, not at the top level: files may share a process
// (`npm run test:fast`), where a top-level hook would run around every other file's tests too.
describe('HTTP metrics', () => {
  before(async () => {
    t = await startApp({ SERVICE_METRICS_TOKEN: METRICS_TOKEN, SERVICE_THROTTLE_ANON: '3/hour' });
    off = await startApp();
    user = await t.user();
    token = await t.token(user.id, ['read:profile', 'read:teams']);
    teamId = (await t.team((await t.user()).id)).id;
  });
  after(async () => {
    await t.close();
    await off.close();
  });

  describe('GET /metrics: who may read it', () => {
    it('without a bearer token, or with a wrong one, is a 401 problem asking for the token', async () => {
      for (const authorization of [
        undefined,
        `Bearer ${METRICS_TOKEN}x`,
        `Bearer ${METRICS_TOKEN.slice(1)}`,
        'Bearer ',
        `Basic ${METRICS_TOKEN}`,
        `bearer ${METRICS_TOKEN}`,
        token,
      ]) {
        const res = await t.inject({ url: '/metrics', headers: authorization === undefined ? {} : { authorization } });
        assert.equal(res.statusCode, 401, String(authorization));
        assert.equal(res.headers['www-authenticate'], 'Bearer realm="metrics"');
        assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
        assert.equal(res.json().status, 401);
        assert.doesNotMatch(res.body, /http_request_duration_seconds/);
      }
    });

    it('with the token: the Prometheus text format, never cached, no cookie', async () => {
      const res = await t.inject({ url: '/metrics', headers: bearer(METRICS_TOKEN) });
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.equal(res.headers['set-cookie'], undefined, 'a machine endpoint: no session or CSRF cookie');
      const x = parseExposition(res.body);
      assert.equal(x.types.get('http_request_duration_seconds'), 'histogram');
      assert.equal(x.types.get('rate_limit_refusals_total'), 'counter');
      // The process defaults.
      for (const name of [
        'process_cpu_seconds_total',
        'process_resident_memory_bytes',
        'nodejs_heap_size_used_bytes',
        'nodejs_eventloop_lag_seconds',
      ]) {
        assert.ok(x.types.has(name), name);
      }
      assert.ok(x.get('process_start_time_seconds') > 0);
    });

    it('is a 404 when SERVICE_METRICS_TOKEN is unset, with or without a token', async () => {
      for (const headers of [{}, bearer(METRICS_TOKEN)]) {
        const res = await off.inject({ url: '/metrics', headers });
        assert.equal(res.statusCode, 404);
        assert.equal(res.json().status, 404);
      }
      assert.equal(off.ctx.metrics, null, 'no registry, no library loaded for it');
    });
  });

  describe('http_request_duration_seconds', () => {
    it('counts each request once, under its route template, method and status', async () => {
      const before = await scrape();
      const otherTeam = '7d4f1c2e-9a8b-4c3d-8e7f-0123456789ab';
      for (let i = 0; i < 3; i++)
        assert.equal((await t.inject({ url: '/api/v1/me/', headers: bearer(token) })).statusCode, 200);
      assert.equal((await t.inject({ url: `/api/v1/teams/${teamId}/`, headers: bearer(token) })).statusCode, 404);
      assert.equal(
        (await t.inject({ url: `/api/v1/teams/${otherTeam}/members/`, headers: bearer(token) })).statusCode,
        404,
      );
      assert.equal((await t.inject({ method: 'HEAD', url: '/healthz' })).statusCode, 200);
      assert.equal((await t.inject({ url: `/no/such/${user.email}` })).statusCode, 404);
      assert.equal((await t.inject({ method: 'DELETE', url: '/api/v1/me/', headers: bearer(token) })).statusCode, 405);
      const after = await scrape();
      const moved = (route: string, status: number, method = 'GET') =>
        count(after, route, status, method) - count(before, route, status, method);
      assert.equal(moved('/api/v1/me/', 200), 3);
      assert.equal(moved('/api/v1/teams/:id/', 404), 1);
      assert.equal(moved('/api/v1/teams/:id/members/', 404), 1);
      assert.equal(moved('/healthz', 200, 'HEAD'), 1);
      assert.equal(moved('unmatched', 404), 1);
      assert.equal(moved('unmatched', 405, 'DELETE'), 1);
      // The scrape before this one is counted too, under its own route.
      assert.ok(count(after, '/metrics', 200) >= 1);
      // A histogram's buckets are cumulative and end at the count.
      const labels = duration('/api/v1/me/', 200);
      const buckets = after.samples.filter(
        (s) =>
          s.name === 'http_request_duration_seconds_bucket' &&
          s.labels.route === '/api/v1/me/' &&
          s.labels.status_code === '200',
      );
      assert.ok(buckets.length > 5);
      for (let i = 1; i < buckets.length; i++) assert.ok(buckets[i].value >= buckets[i - 1].value);
      assert.equal(buckets.at(-1)!.labels.le, '+Inf');
      assert.equal(buckets.at(-1)!.value, after.get('http_request_duration_seconds_count', labels));
      assert.ok(after.get('http_request_duration_seconds_sum', labels) > 0);
    });

    it('names the OAuth server paths answered before routing by their template', async () => {
      const before = await scrape();
      assert.equal((await t.inject({ url: '/o/jwks/' })).statusCode, 200);
      assert.equal((await t.inject({ method: 'DELETE', url: '/o/token/' })).statusCode, 405);
      assert.equal((await t.inject({ url: '/o/authorize/AbCdEf0123456789' })).statusCode >= 300, true);
      const after = await scrape();
      assert.equal(count(after, '/o/jwks/', 200) - count(before, '/o/jwks/', 200), 1);
      assert.equal(count(after, '/o/token/', 405, 'DELETE') - count(before, '/o/token/', 405, 'DELETE'), 1);
      const resumed = after.samples.filter(
        (s) => s.name === 'http_request_duration_seconds_count' && s.labels.route === '/o/authorize/:uid',
      );
      assert.equal(
        resumed.reduce((sum, s) => sum + s.value, 0),
        1,
      );
    });

    it('no label carries an id, an e-mail address or a token', async () => {
      const x = await scrape();
      const values = x.samples.flatMap((s) => Object.values(s.labels));
      for (const secret of [user.email, token, METRICS_TOKEN, teamId, 'AbCdEf0123456789', '7d4f1c2e']) {
        assert.equal(values.filter((v) => v.includes(secret)).length, 0, secret);
      }
      assert.equal(values.filter((v) => v.includes('@')).length, 0);
      for (const route of new Set(
        x.samples.filter((s) => s.name.startsWith('http_request_duration_seconds')).map((s) => s.labels.route),
      )) {
        assert.ok(route === 'unmatched' || /^\/[a-z0-9_/.:-]*$/.test(route), route);
        assert.doesNotMatch(route, /\/\d+\/|[0-9a-f]{8}-[0-9a-f]{4}/, route);
      }
    });

    it('two apps in one process keep their own series', async () => {
      const before = await scrape();
      for (let i = 0; i < 2; i++) await off.inject({ url: '/api/v1/me/' });
      const after = await scrape();
      assert.equal(count(after, '/api/v1/me/', 401), count(before, '/api/v1/me/', 401));
    });
  });

  describe('rate_limit_refusals_total', () => {
    it('counts each 429 of a throttle bucket, and each refusal of a lock after failed attempts', async () => {
      const before = await scrape();
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++)
        statuses.push((await t.inject({ url: '/api/v1/me/', remoteAddress: '192.0.2.7' })).statusCode);
      assert.deepEqual(statuses, [401, 401, 401, 429, 429]);
      // Five wrong passwords lock the (account, address) pair: the sixth attempt, even with the right password, is refused.
      const issue = (password: string) =>
        t.inject({
          method: 'POST',
          url: '/api/auth/token/',
          remoteAddress: '192.0.2.8',
          payload: { email: user.email, password },
        });
      for (let i = 0; i < 5; i++) assert.equal((await issue('not the password')).statusCode, 401);
      assert.equal((await issue(TEST_PASSWORD)).statusCode, 429);
      const after = await scrape();
      const moved = (limit: string) =>
        after.get('rate_limit_refusals_total', { limit }) - before.get('rate_limit_refusals_total', { limit });
      assert.equal(moved('anon'), 2);
      assert.equal(moved('failed_attempts'), 1);
      assert.equal(moved('user'), 0);
      assert.equal(moved('auth'), 0);
      assert.equal(count(after, '/api/v1/me/', 429) - count(before, '/api/v1/me/', 429), 2);
    });
  });
});
