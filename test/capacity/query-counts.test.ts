// What each operation asks of PostgreSQL (or SQLite) and Redis, as docs/deploy.md ("Capacity") states it:
// the capacity tables there are these counts times the request and delivery rates, so the counts are
// held here and the docs stay true. Counted where the stores receive them (store-recorders.ts), on
// whichever dialect the suite runs, with a private Redis when redis-server is installed.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { queueMail, sendQueuedMail } from '../../src/mail/outbox.ts';
import { redisServerAvailable, startPrivateRedis, type PrivateRedis } from '../http/throttle-redis-server.ts';
import { mintAccessToken } from '../mcp/helpers.ts';
import { bearer, TEST_PASSWORD } from '../support/app.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { eventually } from '../support/wait.ts';
import { webhookFixture, type WebhookFixture } from '../webhooks/setup.ts';
import { PAT_LAST_USED, PAT_REREAD, redisRecorder, sqlRecorder, work, writes, type Sent } from './store-recorders.ts';

/** The PAT cache's timed work (pat-cache-timed-work.test.ts): never part of one request's count. */
const timed = (s: Sent) => PAT_REREAD.test(s.sql) || PAT_LAST_USED.test(s.sql);
const show = (sent: readonly Sent[]) => sent.map((s) => s.sql.replace(/\s+/g, ' ').slice(0, 140)).join('\n');

describe('store work per operation (docs/deploy.md, "Capacity")', () => {
  let redis: PrivateRedis | null = null;
  let f: WebhookFixture;
  let receiver: Receiver;
  let sql: ReturnType<typeof sqlRecorder>;
  let commands: Awaited<ReturnType<typeof redisRecorder>> | null = null;
  let postgres = false;

  before(async () => {
    redis = redisServerAvailable ? await startPrivateRedis() : null;
    // A generous delivery timeout: on a loaded machine a slow answer must not become a retry (a second
    // attempt, with statements of its own). The lease covers two timeouts, as the defaults' does, so the
    // worker claims ahead as in production (claim-sizing.ts).
    const slowMachine = { SERVICE_WEBHOOKS_DELIVERY_TIMEOUT: '30', SERVICE_WEBHOOKS_LEASE_SECONDS: '120' };
    f = await webhookFixture(redis ? { ...slowMachine, REDIS_URL: redis.url } : slowMachine);
    postgres = f.t.ctx.db.dialect === 'postgres';
    receiver = await startReceiver();
    sql = sqlRecorder(f.t.ctx.db, f.t.env.DATABASE_URL);
    commands = redis ? await redisRecorder(redis.url) : null;
    // The throttle's script is loaded into Redis by the first request (EVAL); every later one is an EVALSHA.
    await f.t.inject({ url: '/api/v1/me/' });
  });
  after(async () => {
    sql?.stop();
    commands?.close();
    await receiver?.close();
    await f?.close();
    await redis?.kill();
  });

  /** The statements (not BEGIN/COMMIT, not the PAT cache's timed work) and Redis commands `op` causes. */
  async function cost(op: () => Promise<unknown>) {
    sql.take();
    await commands?.take();
    await op();
    const statements = work(sql.take()).filter((s) => !timed(s));
    return { statements, redis: (await commands?.take()) ?? null };
  }
  /** One throttle script per request, when Redis is configured (its bucket's key named). */
  function oneScript(redisCommands: string[][] | null, bucket: 'user' | 'anon' | 'auth') {
    if (redisCommands === null) return;
    assert.equal(redisCommands.length, 1, JSON.stringify(redisCommands));
    assert.equal(redisCommands[0][0], 'evalsha');
    assert.match(redisCommands[0][3], new RegExp(`throttle:${bucket}:`));
  }
  const me = (token: string) => async () => {
    const res = await f.t.inject({ url: '/api/v1/me/', headers: bearer(token) });
    assert.equal(res.statusCode, 200, res.body);
  };

  it('a PAT: one read when not cached, none while cached; one Redis script per request', async () => {
    const user = await f.t.user();
    const token = await f.t.token(user.id, ['read:profile']);
    const miss = await cost(me(token));
    assert.equal(miss.statements.length, 1, show(miss.statements));
    assert.match(miss.statements[0].sql, /from "personal_access_tokens" as "t" inner join "users".*"token_hash" = /s);
    oneScript(miss.redis, 'user');
    const hit = await cost(me(token));
    assert.deepEqual(hit.statements, []);
    oneScript(hit.redis, 'user');
    // Anonymous API requests are counted too (by address); health checks touch neither store but readiness's select 1.
    const anonymous = await cost(() => f.t.inject({ url: '/api/v1/me/' }));
    assert.deepEqual(anonymous.statements, []);
    oneScript(anonymous.redis, 'anon');
    const live = await cost(() => f.t.inject({ url: '/healthz' }));
    assert.deepEqual([live.statements, live.redis ?? []], [[], []]);
    const ready = await cost(() => f.t.inject({ url: '/readyz' }));
    assert.deepEqual(
      ready.statements.map((s) => s.sql.trim()),
      ['select 1'],
    );
    assert.deepEqual(ready.redis ?? [], []);
  });

  it('a token issuance: five statements (three reads, a delete, an insert) and one script; a JWT on /me one read', async () => {
    const user = await f.t.user();
    const issue = async () => {
      const res = await f.t.inject({
        method: 'POST',
        url: '/api/auth/token/',
        payload: { email: user.email, password: TEST_PASSWORD },
      });
      assert.equal(res.statusCode, 200, res.body);
      return res.json() as { access: string; refresh: string };
    };
    await issue(); // the first issuance of a database also makes its signing key
    let pair = { access: '', refresh: '' };
    const issued = await cost(async () => (pair = await issue()));
    assert.equal(issued.statements.length, 5, show(issued.statements));
    assert.deepEqual(
      writes(issued.statements).map((s) => s.sql.split(' "')[0] + ' ' + s.sql.split('"')[1]),
      ['delete from auth_failures', 'insert into jwt_refresh_tokens'],
    );
    oneScript(issued.redis, 'auth');
    await me(pair.access)(); // the first JWT a process verifies loads the public keys
    const read = await cost(me(pair.access));
    assert.equal(read.statements.length, 1, show(read.statements));
    assert.match(read.statements[0].sql, /from "users" where "id" = /);
    oneScript(read.redis, 'user');
    const refreshed = await cost(() =>
      f.t.inject({ method: 'POST', url: '/api/auth/token/refresh/', payload: { refresh: pair.refresh } }),
    );
    assert.equal(refreshed.statements.length, 3, show(refreshed.statements));
    assert.equal(writes(refreshed.statements).length, 2, show(refreshed.statements));
    oneScript(refreshed.redis, 'auth');
  });

  it('an OAuth access token on /me: two reads (the token, its user) and one script, every time', async () => {
    const user = await f.t.user();
    const token = await mintAccessToken(f.t, user.id, f.t.ctx.config.baseUrl, 'read:profile');
    await me(token)();
    for (let i = 0; i < 2; i++) {
      const read = await cost(me(token));
      assert.equal(read.statements.length, 2, show(read.statements));
      assert.match(read.statements[0].sql, /from "oauth_models"/);
      assert.match(read.statements[1].sql, /from "users" where "id" = /);
      oneScript(read.redis, 'user');
    }
  });

  it('a change to any user or token empties every cached token (PostgreSQL: one NOTIFY to every process); a new token empties nothing', async () => {
    const changing = await f.t.user();
    const bystander = await f.t.user();
    const changingToken = await f.t.token(changing.id, ['read:profile', 'write:profile']);
    const bystanderToken = await f.t.token(bystander.id, ['read:profile']);
    await me(changingToken)();
    await me(bystanderToken)();
    const patch = await cost(async () => {
      const res = await f.t.inject({
        method: 'PATCH',
        url: '/api/v1/me/',
        headers: bearer(changingToken),
        payload: { first_name: 'Changed' },
      });
      assert.equal(res.statusCode, 200, res.body);
    });
    const notifies = patch.statements.filter((s) => /pg_notify/.test(s.sql));
    assert.deepEqual(
      notifies.map((s) => s.parameters),
      postgres ? [['svc_table_writes', 'users']] : [],
    );
    // The bystander changed nothing, yet its token is read again: the whole cache went.
    const after = await cost(me(bystanderToken));
    assert.equal(after.statements.length, 1, show(after.statements));
    // An INSERT (a new token) changes nothing a cached entry holds: no NOTIFY, nothing emptied.
    const created = await cost(() => f.t.token(changing.id, ['read:profile']));
    assert.equal(created.statements.filter((s) => /pg_notify/.test(s.sql)).length, 0, show(created.statements));
    const still = await cost(me(bystanderToken));
    assert.deepEqual(still.statements, []);
  });

  it('an event: one statement on PostgreSQL (event, delivery rows and the wake-up NOTIFY), two on SQLite; no Redis', async () => {
    const team = await f.t.team(f.owner.id);
    await f.createSubscription(receiver.url, ['team.member.added'], team.id);
    const emitted = await cost(() => f.emit('team.member.added', member(0), team.id));
    if (postgres) {
      assert.equal(emitted.statements.length, 1, show(emitted.statements));
      assert.match(emitted.statements[0].sql, /insert into events.*insert into webhook_deliveries.*pg_notify/s);
    } else {
      assert.deepEqual(
        emitted.statements.map((s) => /^insert into (\w+)/.exec(s.sql)?.[1]),
        ['events', 'webhook_deliveries'],
      );
    }
    assert.deepEqual(emitted.redis ?? [], []);
  });

  it('a delivery: at most two worker round trips on PostgreSQL (four statements on SQLite) when events come one by one, under 0.1 (0.2) in a burst', async () => {
    const worker = await f.startWorker();
    // One by one: each event waits for its delivery, so each claim takes one row and each result batch holds one.
    const trickle = await workerStatements(20, async (teamId, waitFor) => {
      for (let i = 0; i < 20; i++) {
        await f.emit('team.member.added', member(i), teamId);
        await waitFor(i + 1);
      }
    });
    // PostgreSQL: a claim (one message) and a result write; SQLite: the claim's UPDATE and its subscriptions' read,
    // the result's UPDATE and the failure counters' reset.
    assert.ok(trickle.statements <= (postgres ? 2 : 4) * 20 + trickle.polls, trickle.report);
    // A burst: claims of many rows, results written in batches.
    const burst = await workerStatements(1000, async (teamId) => {
      for (let batch = 0; batch < 10; batch++)
        await f.t.ctx.db.kysely.transaction().execute(async (trx) => {
          for (let i = 0; i < 100; i++)
            await f.t.ctx.events.emit(trx, { type: 'team.member.added', teamId, data: member(batch * 100 + i) });
        });
    });
    assert.ok(burst.statements < (postgres ? 0.1 : 0.2) * 1000 + burst.polls, burst.report);
    await worker.stop();
  });

  /** The worker's statements (claims, result writes) while `count` events of a new team reach the receiver. */
  async function workerStatements(
    count: number,
    emitAll: (teamId: string, waitFor: (n: number) => Promise<void>) => Promise<unknown>,
  ) {
    const team = await f.t.team(f.owner.id);
    const subscription = await f.createSubscription(receiver.url, ['team.member.added'], team.id);
    const already = receiver.received.length;
    const started = Date.now();
    const { statements } = await cost(async () => {
      await emitAll(team.id, (n) => receiver.waitFor(already + n, 30_000).then(() => {}));
      await receiver.waitFor(already + count, 30_000);
      await eventually(async () => {
        const rows = await f.deliveries(subscription.id);
        return rows.length === count && rows.every((row) => row.status === 'success');
      }, 30_000);
    });
    // Not the events' inserts, nor this test's own reads of the log.
    const worker = statements.filter(
      (s) =>
        /webhook_(deliveries|subscriptions)/.test(s.sql) &&
        !/^\s*(insert|with e as)/.test(s.sql) &&
        !/from "webhook_deliveries" where "subscription_id"/.test(s.sql),
    );
    const kinds = new Map<string, number>();
    for (const s of worker) kinds.set(s.sql.slice(0, 60), (kinds.get(s.sql.slice(0, 60)) ?? 0) + 1);
    // A worker with nothing due still claims once a second (its poll): allowed on top, as on a slow machine the
    // window holds some.
    const polls = Math.ceil((Date.now() - started) / 1000) + 1;
    const report = `${worker.length} statements for ${count} deliveries (polls allowed: ${polls}):\n${[...kinds].map(([k, n]) => `${n} × ${k}`).join('\n')}`;
    return { statements: worker.length, polls, report };
  }
  const member = (i: number) => ({ user_id: i + 1, email: `m${i}@example.com`, role: 'member' as const });

  it('an e-mail: one insert to queue it; to send, one update per message and a claim and a suppression read per 25', async () => {
    const queued = await cost(() =>
      f.t.ctx.db.kysely.transaction().execute(async (trx) => {
        for (let i = 0; i < 30; i++)
          await queueMail(f.t.ctx, trx, { to: `m${i}@example.com`, subject: 'capacity', text: 'text' });
      }),
    );
    assert.equal(queued.statements.length, 30, show(queued.statements));
    let sent = 0;
    const sending = await cost(async () => (sent = await sendQueuedMail(f.t.ctx)));
    assert.equal(sent, 30);
    const mail = sending.statements.filter((s) => /"mail_/.test(s.sql));
    const of = (pattern: RegExp) => mail.filter((s) => pattern.test(s.sql)).length;
    assert.equal(
      of(/^update "mail_outbox" set "status" = \S+, "locked_until" = \S+, "updated_at" = \S+ where "id" (in|= any)/),
      2,
      show(mail),
    );
    assert.equal(of(/from "mail_suppressions"/), 2, show(mail));
    assert.equal(of(/^update "mail_outbox" set "status" = \S+, "error"/), 30);
    assert.equal(mail.length, 34, show(mail));
  });
});
