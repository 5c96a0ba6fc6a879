// Throttling with Redis as a shared store: several app instances share one exact limit, and an
// unreachable, killed or stalled Redis never makes the API hang or fail (it falls back to a local
// limiter). Each test starts a private redis-server (the machine's Redis is never stopped).
import assert from 'node:assert/strict';
import net from 'node:net';
import { Redis } from 'ioredis';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { Throttle } from '../../src/http/throttle.ts';
import { startApp, type TestApp } from '../support/app.ts';
import { redisServerAvailable, startPrivateRedis, type PrivateRedis } from './throttle-redis-server.ts';

const skip = redisServerAvailable ? false : 'redis-server is not installed';

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work();
  return { value, ms: performance.now() - started };
}

describe('throttling on Redis', { skip }, () => {
  let redis: PrivateRedis;
  before(async () => {
    redis = await startPrivateRedis();
  });
  after(() => redis.kill());

  it('two app instances against one Redis together allow exactly the limit', async () => {
    const env = { REDIS_URL: redis.url, REDIS_KEY_PREFIX: 'shared:', SERVICE_THROTTLE_ANON: '50/hour' };
    const [a, b] = await Promise.all([startApp(env), startApp(env)]);
    try {
      // Both connected to Redis (under a heavily loaded machine the first connect may outlast the
      // bounded start-up wait; the client then connects in the background).
      const deadline = Date.now() + 10_000;
      while ((a.ctx.throttle.usingFallback || b.ctx.throttle.usingFallback) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.equal(a.ctx.throttle.usingFallback || b.ctx.throttle.usingFallback, false, 'both instances on Redis');
      const call = (app: TestApp) => app.inject({ url: '/api/v1/nope/', remoteAddress: '192.0.2.1' });
      // Alternating one at a time: one count, whichever instance answers.
      const sequential = [];
      for (let i = 0; i < 10; i++) sequential.push((await call(i % 2 ? a : b)).headers['x-ratelimit-remaining']);
      assert.deepEqual(sequential, ['49', '48', '47', '46', '45', '44', '43', '42', '41', '40']);
      // Then 150 at once, spread over both: exactly the 40 left get through.
      const answers = await Promise.all(Array.from({ length: 150 }, (_, i) => call(i % 2 ? a : b)));
      const passed = answers.filter((r) => r.statusCode === 404);
      assert.equal(passed.length, 40);
      assert.equal(answers.filter((r) => r.statusCode === 429).length, 110);
      const remaining = passed.map((r) => Number(r.headers['x-ratelimit-remaining'])).sort((x, y) => x - y);
      assert.deepEqual(
        remaining,
        Array.from({ length: 40 }, (_, i) => i),
      );
      assert.equal(a.ctx.throttle.usingFallback, false);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('Redis killed mid-test: requests are still answered, counted locally; Redis back: shared again', async () => {
    const t = await startApp({ REDIS_URL: redis.url, REDIS_KEY_PREFIX: 'outage:', SERVICE_THROTTLE_ANON: '5/hour' });
    const probe = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 0 });
    try {
      const call = () => t.inject({ url: '/api/v1/nope/', remoteAddress: '192.0.2.2' });
      assert.equal((await call()).headers['x-ratelimit-remaining'], '4');
      assert.equal((await call()).headers['x-ratelimit-remaining'], '3');
      await probe.connect();
      assert.equal(await probe.get('outage:throttle:anon:192.0.2.2'), '2', 'counted in Redis');
      probe.disconnect();

      await redis.kill();
      const during: number[] = [];
      for (let i = 0; i < 7; i++) {
        const { value: res, ms } = await timed(call);
        assert.ok(ms < 1500, `answered in ${Math.round(ms)} ms`);
        assert.match(String(res.headers['x-ratelimit-remaining']), /^\d+$/);
        during.push(res.statusCode);
      }
      // Fail open to a local limiter, not to no limit: a fresh local bucket of 5.
      assert.deepEqual(during, [404, 404, 404, 404, 404, 429, 429]);
      assert.equal(t.ctx.throttle.usingFallback, true);

      await redis.restart();
      const deadline = Date.now() + 10_000;
      let back = false;
      while (Date.now() < deadline && !back) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        const res = await call();
        back = res.statusCode === 404 && res.headers['x-ratelimit-remaining'] === '4';
      }
      assert.ok(back, 'counting in the (empty) Redis again');
      assert.equal(t.ctx.throttle.usingFallback, false);
    } finally {
      probe.disconnect();
      await t.close();
    }
  });

  it('Redis stalled (SIGSTOP): requests wait at most the command timeout, then go local at once', async () => {
    const t = await startApp({ REDIS_URL: redis.url, REDIS_KEY_PREFIX: 'stall:', SERVICE_THROTTLE_ANON: '100/hour' });
    const pid = await redisPid(redis);
    try {
      const call = () => t.inject({ url: '/api/v1/nope/', remoteAddress: '192.0.2.3' });
      assert.equal((await call()).statusCode, 404);
      process.kill(pid, 'SIGSTOP');
      const first = await timed(call);
      assert.equal(first.value.statusCode, 404);
      assert.ok(first.ms < 2500, `first stalled call answered in ${Math.round(first.ms)} ms`);
      const second = await timed(call);
      assert.equal(second.value.statusCode, 404);
      // Well under the 1 s command timeout: it did not wait for Redis.
      assert.ok(second.ms < 900, `next call served locally in ${Math.round(second.ms)} ms`);
    } finally {
      process.kill(pid, 'SIGCONT');
      await t.close();
    }
  });
});

describe('throttling on Redis: logs', { skip }, () => {
  it('an outage is logged once, and the recovery once', async () => {
    const redis = await startPrivateRedis();
    const lines: Array<[string, string]> = [];
    const log = {
      info: (_obj: object, message: string) => lines.push(['info', message]),
      warn: (_obj: object, message: string) => lines.push(['warn', message]),
    };
    const throttle = new Throttle(
      loadConfig({ NODE_ENV: 'test', REDIS_URL: redis.url, SERVICE_THROTTLE_ANON: '100/hour' }),
    );
    try {
      await throttle.connect(log);
      assert.equal((await throttle.consume('anon', '192.0.2.4')).remaining, 99);
      assert.deepEqual(lines, []);
      await redis.kill();
      for (let i = 0; i < 5; i++) assert.equal((await throttle.consume('anon', '192.0.2.4')).allowed, true);
      assert.deepEqual(lines, [['warn', 'Redis unreachable: throttling falls back to per-process in-memory limits']]);
      await redis.restart();
      const deadline = Date.now() + 10_000;
      while (throttle.usingFallback && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal(throttle.usingFallback, false);
      assert.deepEqual(lines.at(-1), ['info', 'Redis reachable again: throttling is shared across processes']);
      assert.equal(lines.length, 2);
    } finally {
      await throttle.close();
      await redis.kill();
    }
  });
});

describe('throttling with Redis unreachable at start', () => {
  it('a closed port: the app starts and answers, counting locally', async () => {
    const port = await closedPort();
    const { value: t, ms } = await timed(() =>
      startApp({ REDIS_URL: `redis://127.0.0.1:${port}`, SERVICE_THROTTLE_ANON: '2/hour' }),
    );
    try {
      assert.ok(ms < 10_000, `started in ${Math.round(ms)} ms`);
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await t.inject({ url: '/api/v1/nope/' })).statusCode);
      assert.deepEqual(statuses, [404, 404, 429]);
      assert.equal(t.ctx.throttle.usingFallback, true);
    } finally {
      await t.close();
    }
  });

  it('a server that accepts and never answers: the start does not hang', async () => {
    const sockets = new Set<net.Socket>();
    const silent = net.createServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as net.AddressInfo).port;
    try {
      const { value: t, ms } = await timed(() => startApp({ REDIS_URL: `redis://127.0.0.1:${port}` }));
      try {
        assert.ok(ms < 10_000, `started in ${Math.round(ms)} ms`);
        const { value: res, ms: answered } = await timed(() => t.inject({ url: '/api/v1/nope/' }));
        assert.equal(res.statusCode, 404);
        assert.equal(res.headers['x-ratelimit-remaining'], '99');
        assert.ok(answered < 1500, `answered in ${Math.round(answered)} ms`);
      } finally {
        await t.close();
      }
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});

async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function redisPid(redis: PrivateRedis): Promise<number> {
  const client = new Redis(redis.url, { maxRetriesPerRequest: 0 });
  try {
    const info = await client.info('server');
    return Number(/process_id:(\d+)/.exec(info)![1]);
  } finally {
    client.disconnect();
  }
}
