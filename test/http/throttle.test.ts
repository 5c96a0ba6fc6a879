// Throttling as a client sees it: the X-RateLimit-* headers on every /api/ answer, the 429 problem,
// the buckets (anonymous per address, one per user, the auth bucket), X-Forwarded-For only from a
// trusted proxy. With TEST_REDIS_URL set these run against Redis (testEnv gives each app its own
// key prefix); the multi-process and outage tests always use a private redis-server of their own.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TypedApp } from '../../src/app-context.ts';
import { bearer, startApp, type TestApp } from '../support/app.ts';

const DETAIL = /^Request was throttled\. Expected available in (\d+) seconds?\.$/;

interface Counters {
  runs: number;
}

function testRoutes(counters: Counters) {
  return (app: TypedApp) => {
    app.post('/api/v1/test-throttle/', async (_request, reply) => {
      counters.runs++;
      return reply.code(201).send({ ran: counters.runs });
    });
    app.get('/api/v1/test-throttle/boom/', async () => {
      throw new Error('boom');
    });
    app.post('/api/v1/test-throttle/token/', { config: { throttle: 'auth' } }, async () => ({ issued: true }));
  };
}

function assertThrottled(res: { statusCode: number; headers: Record<string, unknown>; json(): any }) {
  assert.equal(res.statusCode, 429);
  assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
  const retryAfter = String(res.headers['retry-after']);
  assert.match(retryAfter, /^[1-9]\d*$/, 'Retry-After is an integer of at least 1');
  const body = res.json();
  assert.equal(body.status, 429);
  const match = DETAIL.exec(body.detail);
  assert.ok(match, `detail "${body.detail}"`);
  assert.equal(match[1], retryAfter, 'detail and Retry-After name the same wait');
  if (match[1] === '1') assert.equal(body.detail, 'Request was throttled. Expected available in 1 second.');
  assert.equal(res.headers['x-ratelimit-remaining'], '0');
}

describe('throttling: anonymous bucket at the default 100/hour', () => {
  let t: TestApp;
  const counters: Counters = { runs: 0 };
  before(async () => {
    t = await startApp({}, { beforeReady: testRoutes(counters) });
  });
  after(() => t.close());

  it('the 100th request passes, the 101st is 429; headers count down exactly', async () => {
    for (let i = 1; i <= 100; i++) {
      const res = await t.inject({ url: '/api/v1/me/', remoteAddress: '192.0.2.10' });
      assert.equal(res.statusCode, 401, `request ${i}`);
      assert.equal(res.headers['x-ratelimit-limit'], '100');
      assert.equal(res.headers['x-ratelimit-remaining'], String(100 - i), `remaining after request ${i}`);
      const reset = Number(res.headers['x-ratelimit-reset']);
      assert.ok(Number.isInteger(reset) && reset >= 1 && reset <= 3600, `reset ${reset}`);
    }
    const refused = await t.inject({ url: '/api/v1/me/', remoteAddress: '192.0.2.10' });
    assertThrottled(refused);
    assert.equal(refused.headers['x-ratelimit-limit'], '100');
    const wait = Number(refused.headers['retry-after']);
    assert.ok(wait > 3500 && wait <= 3600, `an hour's window: ${wait}`);
    assert.equal(refused.headers['x-ratelimit-reset'], refused.headers['retry-after']);
    // Another address has a bucket of its own.
    const other = await t.inject({ url: '/api/v1/me/', remoteAddress: '192.0.2.11' });
    assert.equal(other.statusCode, 401);
    assert.equal(other.headers['x-ratelimit-remaining'], '99');
  });

  it('a refused request does not run the route', async () => {
    const address = '192.0.2.20';
    for (let i = 0; i < 100; i++) await t.inject({ url: '/api/v1/nope/', remoteAddress: address });
    const before = counters.runs;
    const res = await t.inject({ method: 'POST', url: '/api/v1/test-throttle/', remoteAddress: address, payload: {} });
    assertThrottled(res);
    assert.equal(counters.runs, before);
  });

  it('IPv6 clients are counted per /64', async () => {
    const first = await t.inject({ url: '/api/v1/nope/', remoteAddress: '2001:db8:1:2::1' });
    const second = await t.inject({ url: '/api/v1/nope/', remoteAddress: '2001:db8:1:2:ffff::9' });
    const elsewhere = await t.inject({ url: '/api/v1/nope/', remoteAddress: '2001:db8:1:3::1' });
    assert.equal(first.headers['x-ratelimit-remaining'], '99');
    assert.equal(second.headers['x-ratelimit-remaining'], '98');
    assert.equal(elsewhere.headers['x-ratelimit-remaining'], '99');
  });
});

describe('throttling: every /api/ answer carries the headers', () => {
  let t: TestApp;
  let token: string;
  before(async () => {
    t = await startApp({ SERVICE_THROTTLE_USER: '50/minute' }, { beforeReady: testRoutes({ runs: 0 }) });
    const user = await t.user();
    token = await t.token(user.id, ['read:profile']);
  });
  after(() => t.close());

  const cases: Array<[string, string, string, number]> = [
    ['2xx', 'GET', '/api/v1/me/', 200],
    ['401 (no credential)', 'GET', '/api/v1/teams/', 401],
    ['403 (scope missing)', 'GET', '/api/v1/teams/', 403],
    ['404 (unknown path)', 'GET', '/api/v1/does-not-exist/', 404],
    ['404 (no trailing slash)', 'GET', '/api/v1/me', 404],
    ['405 (wrong method)', 'DELETE', '/api/v1/me/', 405],
    ['5xx', 'GET', '/api/v1/test-throttle/boom/', 500],
  ];
  for (const [label, method, url, status] of cases) {
    it(label, async () => {
      const headers = label.startsWith('401') ? {} : bearer(token);
      const res = await t.inject({ method: method as 'GET', url, headers });
      assert.equal(res.statusCode, status);
      assert.match(String(res.headers['x-ratelimit-limit']), /^\d+$/);
      assert.match(String(res.headers['x-ratelimit-remaining']), /^\d+$/);
      assert.match(String(res.headers['x-ratelimit-reset']), /^\d+$/);
    });
  }

  it('400 (malformed JSON) and 413 (body too large) too', async () => {
    const malformed = await t.inject({
      method: 'POST',
      url: '/api/v1/test-throttle/',
      headers: { ...bearer(token), 'content-type': 'application/json' },
      payload: '{"a":',
    });
    const huge = await t.inject({
      method: 'POST',
      url: '/api/v1/test-throttle/',
      headers: { ...bearer(token), 'content-type': 'application/json' },
      payload: JSON.stringify({ a: 'x'.repeat(1_100_000) }),
    });
    assert.deepEqual([malformed.statusCode, huge.statusCode], [400, 413]);
    for (const res of [malformed, huge]) assert.match(String(res.headers['x-ratelimit-remaining']), /^\d+$/);
  });

  it('400 (malformed percent-encoding) and 404 (over-long path parameter), refused before routing, are counted too', async () => {
    const first = await t.inject({ url: '/api/v1/teams/%ZZ/', headers: bearer(token) });
    const second = await t.inject({ url: `/api/v1/teams/${'a'.repeat(200)}/members/`, headers: bearer(token) });
    assert.deepEqual([first.statusCode, second.statusCode], [400, 404]);
    for (const res of [first, second]) {
      assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
      assert.match(String(res.headers['x-request-id']), /^[0-9a-f-]{36}$/);
      assert.equal(res.headers['x-ratelimit-limit'], '50');
      assert.match(String(res.headers['x-ratelimit-reset']), /^\d+$/);
    }
    assert.equal(
      Number(second.headers['x-ratelimit-remaining']),
      Number(first.headers['x-ratelimit-remaining']) - 1,
      'counted in the user bucket',
    );
  });

  it('paths outside /api/ are not throttled', async () => {
    const res = await t.inject({ url: '/healthz' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['x-ratelimit-limit'], undefined);
  });
});

describe('throttling: one bucket per user', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp({ SERVICE_THROTTLE_USER: '50/minute', SERVICE_THROTTLE_ANON: '1000/hour' });
  });
  after(() => t.close());

  it('two tokens of one user share the bucket; another user has their own', async () => {
    const alice = await t.user();
    const bob = await t.user();
    const [a1, a2, b1] = await Promise.all([
      t.token(alice.id, ['read:profile']),
      t.token(alice.id, ['read:profile']),
      t.token(bob.id, ['read:profile']),
    ]);
    const r1 = await t.inject({ url: '/api/v1/me/', headers: bearer(a1) });
    const r2 = await t.inject({ url: '/api/v1/me/', headers: bearer(a2), remoteAddress: '198.51.100.9' });
    const r3 = await t.inject({ url: '/api/v1/me/', headers: bearer(b1) });
    assert.deepEqual(
      [r1, r2, r3].map((r) => [r.statusCode, r.headers['x-ratelimit-limit'], r.headers['x-ratelimit-remaining']]),
      [
        [200, '50', '49'],
        [200, '50', '48'],
        [200, '50', '49'],
      ],
    );
  });

  it('200 concurrent requests from one user against a limit of 50: exactly 50 through', async () => {
    const user = await t.user();
    const token = await t.token(user.id, ['read:profile']);
    const answers = await Promise.all(
      Array.from({ length: 200 }, () => t.inject({ url: '/api/v1/me/', headers: bearer(token) })),
    );
    const statuses = answers.map((r) => r.statusCode);
    assert.equal(statuses.filter((s) => s === 200).length, 50);
    assert.equal(statuses.filter((s) => s === 429).length, 150);
    const remaining = answers
      .filter((r) => r.statusCode === 200)
      .map((r) => Number(r.headers['x-ratelimit-remaining']));
    assert.deepEqual(
      remaining.sort((a, b) => a - b),
      Array.from({ length: 50 }, (_, i) => i),
    );
  });

  it('an invalid credential counts against the anonymous bucket of its address', async () => {
    const address = '203.0.113.50';
    const first = await t.inject({
      url: '/api/v1/me/',
      headers: bearer('svc_notARealToken000000000000000000000'),
      remoteAddress: address,
    });
    const second = await t.inject({
      url: '/api/v1/me/',
      headers: { authorization: 'Basic abc' },
      remoteAddress: address,
    });
    assert.equal(first.statusCode, 401);
    assert.equal(first.headers['x-ratelimit-limit'], '1000');
    assert.equal(first.headers['x-ratelimit-remaining'], '999');
    assert.equal(second.headers['x-ratelimit-remaining'], '998');
  });
});

describe('throttling: the auth bucket', () => {
  let t: TestApp;
  let token: string;
  before(async () => {
    t = await startApp({ SERVICE_THROTTLE_AUTH: '3/minute' }, { beforeReady: testRoutes({ runs: 0 }) });
    const user = await t.user();
    token = await t.token(user.id, ['read:profile']);
  });
  after(() => t.close());

  it('a route with config.throttle = "auth" counts per address in its own bucket', async () => {
    const address = '192.0.2.77';
    const seen: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await t.inject({
        method: 'POST',
        url: '/api/v1/test-throttle/token/',
        remoteAddress: address,
        payload: {},
      });
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['x-ratelimit-limit'], '3');
      seen.push(String(res.headers['x-ratelimit-remaining']));
    }
    assert.deepEqual(seen, ['2', '1', '0']);
    // Even with a valid credential it is the address's auth bucket that counts.
    const refused = await t.inject({
      method: 'POST',
      url: '/api/v1/test-throttle/token/',
      remoteAddress: address,
      headers: bearer(token),
      payload: {},
    });
    assertThrottled(refused);
    assert.equal(refused.headers['x-ratelimit-limit'], '3');
    // The anonymous and user buckets are untouched by it.
    const anon = await t.inject({ url: '/api/v1/nope/', remoteAddress: address });
    assert.equal(anon.headers['x-ratelimit-remaining'], '99');
    const other = await t.inject({
      method: 'POST',
      url: '/api/v1/test-throttle/token/',
      remoteAddress: '192.0.2.78',
      payload: {},
    });
    assert.equal(other.statusCode, 200);
  });

  it('ctx.throttle.consume("auth", address) is the same bucket (for raw handlers such as /o/token/)', async () => {
    const address = '192.0.2.90';
    const first = await t.ctx.throttle.consume('auth', address);
    assert.deepEqual([first.allowed, first.limit, first.remaining], [true, 3, 2]);
    const res = await t.inject({
      method: 'POST',
      url: '/api/v1/test-throttle/token/',
      remoteAddress: address,
      payload: {},
    });
    assert.equal(res.headers['x-ratelimit-remaining'], '1');
  });
});

describe('throttling: 1-second windows', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp({ SERVICE_THROTTLE_ANON: '1/second' });
  });
  after(() => t.close());

  it('says "1 second." and the window resets', async () => {
    const first = await t.inject({ url: '/api/v1/nope/' });
    assert.equal(first.statusCode, 404);
    const refused = await t.inject({ url: '/api/v1/nope/' });
    assertThrottled(refused);
    assert.equal(refused.headers['retry-after'], '1');
    assert.equal(refused.json().detail, 'Request was throttled. Expected available in 1 second.');
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const later = await t.inject({ url: '/api/v1/nope/' });
    assert.equal(later.statusCode, 404);
  });
});

describe('throttling: X-Forwarded-For only from a trusted proxy', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp({ SERVICE_THROTTLE_ANON: '2/hour', SERVICE_TRUSTED_PROXIES: '10.0.0.0/8, 2001:db8:ffff::1' });
  });
  after(() => t.close());

  const call = (remoteAddress: string, xff?: string) =>
    t.inject({ url: '/api/v1/nope/', remoteAddress, headers: xff === undefined ? {} : { 'x-forwarded-for': xff } });

  it('behind a trusted proxy the right-most untrusted hop is the client; forged hops to its left are ignored', async () => {
    assert.equal((await call('10.0.0.1', 'forged-1, 203.0.113.1, 10.0.0.2')).headers['x-ratelimit-remaining'], '1');
    assert.equal((await call('10.0.0.3', '1.1.1.1, 203.0.113.1')).headers['x-ratelimit-remaining'], '0');
    assertThrottled(await call('10.0.0.1', '9.9.9.9, 203.0.113.1, 10.200.0.1'));
    // A different client behind the same proxy is counted apart.
    assert.equal((await call('10.0.0.1', '203.0.113.2')).headers['x-ratelimit-remaining'], '1');
    // A dual-stack socket reports the IPv4 proxy as ::ffff:10.x.x.x: still trusted.
    assert.equal((await call('::ffff:10.0.0.9', '203.0.113.2, 10.0.0.1')).headers['x-ratelimit-remaining'], '0');
    // Trusted IPv6 proxy, client address with a port.
    assert.equal((await call('2001:db8:ffff::1', '203.0.113.3:4567')).headers['x-ratelimit-remaining'], '1');
  });

  it('from an untrusted peer X-Forwarded-For is ignored: rotating it does not escape the bucket', async () => {
    assert.equal((await call('198.51.100.7', '203.0.113.10')).headers['x-ratelimit-remaining'], '1');
    assert.equal((await call('198.51.100.7', '203.0.113.11')).headers['x-ratelimit-remaining'], '0');
    assertThrottled(await call('198.51.100.7', '203.0.113.12'));
  });

  it('a trusted proxy without X-Forwarded-For is itself the client', async () => {
    assert.equal((await call('10.5.5.5')).headers['x-ratelimit-remaining'], '1');
    assert.equal((await call('10.5.5.5')).headers['x-ratelimit-remaining'], '0');
  });
});

describe('throttling: SERVICE_TRUSTED_PROXIES is validated', () => {
  it('a value that is neither address nor CIDR stops the start, naming the variable', async () => {
    const { loadConfig, ConfigError } = await import('../../src/config.ts');
    assert.throws(
      () => loadConfig({ SERVICE_TRUSTED_PROXIES: '10.0.0.0/8, proxy.example.com' }),
      (error: Error) => {
        return (
          error instanceof ConfigError &&
          /SERVICE_TRUSTED_PROXIES/.test(error.message) &&
          /proxy\.example\.com/.test(error.message)
        );
      },
    );
  });
});

describe('FixedWindows (the in-process store)', () => {
  it("opens a window at a key's first request, counts refusals too, and starts afresh when it ends", async () => {
    const { FixedWindows } = await import('../../src/http/fixed-windows.ts');
    const { ratePolicy } = await import('../../src/http/ratelimit-fields.ts');
    const spec = { limit: 2, windowSeconds: 60 };
    const policy = ratePolicy('anon', spec);
    const windows = new FixedWindows(spec, policy);
    const t0 = 1_000_000;
    assert.deepEqual(windows.consume('a', t0), { allowed: true, limit: 2, remaining: 1, resetSeconds: 60, policy });
    assert.deepEqual(windows.consume('a', t0 + 30_500), {
      allowed: true,
      limit: 2,
      remaining: 0,
      resetSeconds: 30,
      policy,
    });
    assert.deepEqual(windows.consume('a', t0 + 59_001), {
      allowed: false,
      limit: 2,
      remaining: 0,
      resetSeconds: 1,
      policy,
    });
    assert.deepEqual(
      windows.consume('b', t0 + 59_001),
      { allowed: true, limit: 2, remaining: 1, resetSeconds: 60, policy },
      'another key, its own window',
    );
    assert.deepEqual(
      windows.consume('a', t0 + 60_000),
      { allowed: true, limit: 2, remaining: 1, resetSeconds: 60, policy },
      'a new window',
    );
  });
});
