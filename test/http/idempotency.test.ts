// Idempotency-Key as a client sees it, on a test-only route that opts in (`config: { idempotent:
// true }`) and writes one row per execution, so side effects can be counted: replays, conflicts,
// concurrency (one process and two), invalid keys, per-user scope, TTL, 5xx not stored.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import type { AppContext, TypedApp } from '../../src/app-context.ts';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createContext } from '../../src/context.ts';
import { idempotencyPurgeTask } from '../../src/http/idempotency-task.ts';
import { purgeExpiredIdempotencyKeys } from '../../src/http/idempotency.ts';
import { HttpProblem } from '../../src/http/problem.ts';
import { startWorker } from '../../src/worker/worker.ts';
import { bearer, startApp, type TestApp } from '../support/app.ts';

interface Body {
  label: string;
  fail?: 'once' | 'always';
  invalid?: boolean;
  gate?: boolean;
}

const failedOnce = new Set<string>();
let openGate: () => void = () => {};
let gate: Promise<void> = Promise.resolve();

async function createSideEffectTable(ctx: AppContext) {
  await ctx.db.kysely.schema
    .createTable('idem_side_effects')
    .ifNotExists()
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('label', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
}

function registerTestRoutes(app: TypedApp, ctx: AppContext) {
  const handler = async (request: { body: unknown; url: string }, reply: any) => {
    const body = request.body as Body;
    if (body.gate) await gate;
    // Long enough that concurrent requests overlap the running one.
    await new Promise((resolve) => setTimeout(resolve, 20));
    if (body.fail === 'always' || (body.fail === 'once' && !failedOnce.has(body.label))) {
      failedOnce.add(body.label);
      throw new Error('the route failed');
    }
    if (body.invalid) throw new HttpProblem(422, `Label "${body.label}" is not acceptable.`);
    const id = randomUUID();
    await sql`insert into idem_side_effects (id, label, created_at) values (${id}, ${body.label}, ${new Date().toISOString()})`.execute(
      ctx.db.kysely,
    );
    return reply
      .code(201)
      .header('Location', `${ctx.config.baseUrl}${request.url}${id}/`)
      .send({ id, label: body.label });
  };
  for (const url of ['/api/v1/test-idem/', '/api/v1/test-idem-other/']) {
    app.post(url, { config: { idempotent: true, scopes: ['write:teams'] } }, handler);
  }
}

async function sideEffects(ctx: AppContext, label?: string): Promise<number> {
  const query =
    label === undefined
      ? sql<{ n: number }>`select count(*) as n from idem_side_effects`
      : sql<{ n: number }>`select count(*) as n from idem_side_effects where label = ${label}`;
  const { rows } = await query.execute(ctx.db.kysely);
  return Number(rows[0].n);
}

describe('Idempotency-Key', () => {
  let t: TestApp;
  let token: string;
  let otherToken: string;
  before(async () => {
    t = await startApp(
      {},
      {
        beforeReady: async (app, ctx) => {
          await createSideEffectTable(ctx);
          registerTestRoutes(app, ctx);
        },
      },
    );
    const user = await t.user();
    const other = await t.user();
    token = await t.token(user.id, ['write:teams']);
    otherToken = await t.token(other.id, ['write:teams']);
  });
  after(() => t.close());

  const post = (body: Body | string, key?: string, as = token, url = '/api/v1/test-idem/') =>
    t.inject({
      method: 'POST',
      url,
      headers: {
        ...bearer(as),
        'content-type': 'application/json',
        ...(key === undefined ? {} : { 'idempotency-key': key }),
      },
      payload: typeof body === 'string' ? body : JSON.stringify(body),
    });

  it('without the header every request runs', async () => {
    const a = await post({ label: 'plain' });
    const b = await post({ label: 'plain' });
    assert.deepEqual([a.statusCode, b.statusCode], [201, 201]);
    assert.notEqual(a.json().id, b.json().id);
    assert.equal(a.headers['idempotency-replay'], undefined);
    assert.equal(await sideEffects(t.ctx, 'plain'), 2);
  });

  it('same key and body: the stored response is replayed with Idempotency-Replay: true, the route does not run again', async () => {
    const key = randomUUID();
    const first = await post({ label: 'replay' }, key);
    assert.equal(first.statusCode, 201);
    assert.equal(first.headers['idempotency-replay'], undefined);
    const second = await post({ label: 'replay' }, key);
    assert.equal(second.statusCode, 201);
    assert.equal(second.headers['idempotency-replay'], 'true');
    assert.equal(second.body, first.body);
    assert.equal(second.headers['content-type'], first.headers['content-type']);
    assert.equal(second.headers.location, first.headers.location);
    assert.match(String(second.headers.location), /^http:\/\/testserver\/api\/v1\/test-idem\/[0-9a-f-]{36}\/$/);
    assert.notEqual(second.headers['x-request-id'], first.headers['x-request-id']);
    assert.match(String(second.headers['x-ratelimit-remaining']), /^\d+$/);
    assert.equal(await sideEffects(t.ctx, 'replay'), 1);
  });

  it('same key, different body: 409, nothing runs', async () => {
    const key = randomUUID();
    assert.equal((await post({ label: 'mismatch' }, key)).statusCode, 201);
    const res = await post({ label: 'mismatch-2' }, key);
    assert.equal(res.statusCode, 409);
    assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
    assert.equal(res.json().detail, 'This Idempotency-Key was already used with a different request body.');
    // The fingerprint is of the raw bytes: the same JSON spelled differently is a different body.
    const respaced = await post('{ "label": "mismatch" }', key);
    assert.equal(respaced.statusCode, 409);
    assert.equal(await sideEffects(t.ctx, 'mismatch-2'), 0);
    assert.equal(await sideEffects(t.ctx, 'mismatch'), 1);
  });

  for (const [label, key] of [
    ['empty but present', ''],
    ['129 characters', 'k'.repeat(129)],
    ['a space', 'has space'],
    ['a dot', 'a.b'],
    ['unicode letters', 'clé'],
    ['non-Latin letters', 'ключ'],
  ]) {
    it(`an invalid key (${label}) is 400 and changes nothing`, async () => {
      const before = await sideEffects(t.ctx);
      const res = await post({ label: 'invalid-key' }, key);
      assert.equal(res.statusCode, 400);
      assert.equal(res.json().detail, 'Idempotency-Key must be 1 to 128 characters: letters, digits, "-" or "_".');
      assert.equal(await sideEffects(t.ctx), before);
    });
  }

  it('a key of exactly 128 characters is accepted', async () => {
    const key = 'K'.repeat(120) + randomUUID().slice(0, 8);
    assert.equal((await post({ label: 'long-key' }, key)).statusCode, 201);
    assert.equal((await post({ label: 'long-key' }, key)).headers['idempotency-replay'], 'true');
  });

  it("another user's identical key is independent, and so is another path", async () => {
    const key = randomUUID();
    const mine = await post({ label: 'scoped' }, key);
    const theirs = await post({ label: 'scoped' }, key, otherToken);
    const elsewhere = await post({ label: 'scoped' }, key, token, '/api/v1/test-idem-other/');
    for (const res of [mine, theirs, elsewhere]) {
      assert.equal(res.statusCode, 201);
      assert.equal(res.headers['idempotency-replay'], undefined);
    }
    assert.equal(await sideEffects(t.ctx, 'scoped'), 3);
  });

  it('a 4xx answer of the route is stored and replayed too', async () => {
    const key = randomUUID();
    const first = await post({ label: 'rejected', invalid: true }, key);
    assert.equal(first.statusCode, 422);
    const again = await post({ label: 'rejected', invalid: true }, key);
    assert.equal(again.statusCode, 422);
    assert.equal(again.headers['idempotency-replay'], 'true');
    assert.equal(again.body, first.body);
    assert.equal(again.headers['content-type'], 'application/problem+json; charset=utf-8');
  });

  it('a 500 from the route is not stored: the key is free for the retry', async () => {
    const key = randomUUID();
    const failed = await post({ label: 'flaky', fail: 'once' }, key);
    assert.equal(failed.statusCode, 500);
    assert.equal(await sideEffects(t.ctx, 'flaky'), 0);
    const retried = await post({ label: 'flaky', fail: 'once' }, key);
    assert.equal(retried.statusCode, 201);
    assert.equal(retried.headers['idempotency-replay'], undefined);
    assert.equal(await sideEffects(t.ctx, 'flaky'), 1);
    const rows = await t.ctx.db.kysely
      .selectFrom('idempotency_keys')
      .select('status_code')
      .where('idempotency_key', '=', key)
      .execute();
    assert.deepEqual(
      rows.map((r) => r.status_code),
      [201],
    );
  });

  it('while the first request runs, the same key is 409 "in progress"; afterwards it replays', async () => {
    const key = randomUUID();
    gate = new Promise((resolve) => (openGate = resolve));
    const running = post({ label: 'slow', gate: true }, key);
    // Wait until the reservation is committed.
    for (let i = 0; i < 100; i++) {
      const row = await t.ctx.db.kysely
        .selectFrom('idempotency_keys')
        .select('id')
        .where('idempotency_key', '=', key)
        .executeTakeFirst();
      if (row) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const concurrent = await post({ label: 'slow', gate: true }, key);
    assert.equal(concurrent.statusCode, 409);
    assert.match(concurrent.json().detail, /in progress/);
    openGate();
    const first = await running;
    assert.equal(first.statusCode, 201);
    const later = await post({ label: 'slow', gate: true }, key);
    assert.equal(later.headers['idempotency-replay'], 'true');
    assert.equal(later.body, first.body);
    assert.equal(await sideEffects(t.ctx, 'slow'), 1);
  });

  it('50 concurrent identical requests over real sockets: one execution; every answer is the result or the in-progress 409', async () => {
    const base = await t.listen();
    const key = randomUUID();
    const payload = JSON.stringify({ label: 'stampede' });
    const answers = await Promise.all(
      Array.from({ length: 50 }, async () => {
        const res = await fetch(`${base}/api/v1/test-idem/`, {
          method: 'POST',
          headers: { ...bearer(token), 'content-type': 'application/json', 'idempotency-key': key },
          body: payload,
        });
        return { status: res.status, replay: res.headers.get('idempotency-replay'), body: await res.text() };
      }),
    );
    assert.equal(await sideEffects(t.ctx, 'stampede'), 1);
    const results = answers.filter((a) => a.status === 201);
    const inProgress = answers.filter((a) => a.status === 409);
    assert.equal(results.length + inProgress.length, 50, `statuses: ${answers.map((a) => a.status).join(',')}`);
    assert.equal(results.filter((a) => a.replay === null).length, 1, 'exactly one original answer');
    assert.ok(results.every((a) => a.body === results[0].body));
    assert.ok(inProgress.every((a) => /in progress/.test(JSON.parse(a.body).detail)));
  });

  it('after the TTL the key is fresh again; the worker purges expired records', async () => {
    const key = randomUUID();
    assert.equal((await post({ label: 'ttl' }, key)).statusCode, 201);
    const live = randomUUID();
    assert.equal((await post({ label: 'ttl-live' }, live)).statusCode, 201);
    // Time passes: the record's expiry moves into the past.
    const past = new Date(Date.now() - 1000).toISOString();
    await t.ctx.db.kysely
      .updateTable('idempotency_keys')
      .set({ expires_at: past })
      .where('idempotency_key', '=', key)
      .execute();
    const fresh = await post({ label: 'ttl-2' }, key);
    assert.equal(fresh.statusCode, 201, 'a different body is no conflict once expired');
    assert.equal(fresh.headers['idempotency-replay'], undefined);
    assert.equal(await sideEffects(t.ctx, 'ttl-2'), 1);

    await t.ctx.db.kysely
      .updateTable('idempotency_keys')
      .set({ expires_at: past })
      .where('idempotency_key', '=', key)
      .execute();
    const worker = startWorker(t.ctx, [idempotencyPurgeTask]);
    try {
      for (let i = 0; i < 200; i++) {
        const left = await t.ctx.db.kysely
          .selectFrom('idempotency_keys')
          .select('id')
          .where('idempotency_key', '=', key)
          .executeTakeFirst();
        if (!left) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    } finally {
      await worker.stop();
    }
    const keys = (await t.ctx.db.kysely.selectFrom('idempotency_keys').select('idempotency_key').execute()).map(
      (r) => r.idempotency_key,
    );
    assert.ok(!keys.includes(key), 'expired record purged');
    assert.ok(keys.includes(live), 'live record kept');
    assert.equal(await purgeExpiredIdempotencyKeys(t.ctx.db.kysely), 0);
  });

  it('a reservation abandoned by a dead process is taken over after its lease', async () => {
    const key = randomUUID();
    const user = await t.ctx.db.kysely
      .selectFrom('personal_access_tokens')
      .select('user_id')
      .orderBy('id')
      .executeTakeFirstOrThrow();
    const past = new Date(Date.now() - 1000).toISOString();
    await t.ctx.db.kysely
      .insertInto('idempotency_keys')
      .values({
        user_id: user.user_id,
        method: 'POST',
        path: '/api/v1/test-idem/',
        idempotency_key: key,
        fingerprint: 'f'.repeat(64),
        locked_until: past,
        created_at: past,
        expires_at: new Date(Date.now() + 3600_000).toISOString(),
      })
      .execute();
    const res = await post({ label: 'abandoned' }, key);
    assert.equal(res.statusCode, 201);
    assert.equal(await sideEffects(t.ctx, 'abandoned'), 1);
  });

  it('authentication comes first: no credential is 401 and nothing is recorded', async () => {
    const key = randomUUID();
    const res = await t.inject({
      method: 'POST',
      url: '/api/v1/test-idem/',
      headers: { 'idempotency-key': key },
      payload: { label: 'anon' },
    });
    assert.equal(res.statusCode, 401);
    const row = await t.ctx.db.kysely
      .selectFrom('idempotency_keys')
      .select('id')
      .where('idempotency_key', '=', key)
      .executeTakeFirst();
    assert.equal(row, undefined);
  });

  it('two app instances on one database: 40 concurrent identical requests run the route once', async () => {
    const ctx2 = createContext(loadConfig(t.env));
    const app2 = await buildApp(ctx2);
    registerTestRoutes(app2, ctx2);
    await app2.ready();
    try {
      const key = randomUUID();
      const answers = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          (i % 2 ? t.app : app2).inject({
            method: 'POST',
            url: '/api/v1/test-idem/',
            headers: { ...bearer(token), 'content-type': 'application/json', 'idempotency-key': key },
            payload: JSON.stringify({ label: 'two-apps' }),
          }),
        ),
      );
      assert.ok(
        answers.every((r) => r.statusCode === 201 || (r.statusCode === 409 && /in progress/.test(r.json().detail))),
      );
      assert.equal(
        answers.filter((r) => r.statusCode === 201 && r.headers['idempotency-replay'] === undefined).length,
        1,
      );
      assert.equal(await sideEffects(t.ctx, 'two-apps'), 1);
    } finally {
      await app2.close();
      await ctx2.db.close();
    }
  });
});

describe('Idempotency-Key on POST /api/v1/teams/{team_id}/invitations/', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp({ SERVICE_WEBHOOKS_ENABLED: 'true' });
  });
  after(() => t.close());

  it('50 concurrent identical requests over real sockets: one invitation, one e-mail, one event', async () => {
    const owner = await t.user();
    const team = await t.team(owner.id);
    const token = await t.token(owner.id, ['write:teams']);
    const base = await t.listen();
    const key = randomUUID();
    const answers = await Promise.all(
      Array.from({ length: 50 }, async () => {
        const res = await fetch(`${base}/api/v1/teams/${team.id}/invitations/`, {
          method: 'POST',
          headers: { ...bearer(token), 'content-type': 'application/json', 'idempotency-key': key },
          body: JSON.stringify({ email: 'invitee@example.com', role: 'member' }),
        });
        return { status: res.status, replay: res.headers.get('idempotency-replay'), body: await res.text() };
      }),
    );
    const created = answers.filter((a) => a.status === 201);
    assert.ok(
      answers.every((a) => a.status === 201 || (a.status === 409 && /in progress/.test(JSON.parse(a.body).detail))),
      `statuses: ${answers.map((a) => a.status).join(',')}`,
    );
    assert.equal(created.filter((a) => a.replay === null).length, 1);
    assert.ok(created.every((a) => a.body === created[0].body));
    const db = t.ctx.db.kysely;
    const count = async (query: ReturnType<typeof sql<{ n: number }>>) => Number((await query.execute(db)).rows[0].n);
    assert.equal(await count(sql<{ n: number }>`select count(*) as n from invitations where team_id = ${team.id}`), 1);
    assert.equal(
      await count(
        sql<{ n: number }>`select count(*) as n from mail_outbox where to_addresses like ${'%invitee@example.com%'}`,
      ),
      1,
    );
    assert.equal(
      await count(
        sql<{
          n: number;
        }>`select count(*) as n from events where type = ${'team.invitation.created'} and team_id = ${team.id}`,
      ),
      1,
    );
    // A later retry replays, still without a second invitation.
    const retry = await fetch(`${base}/api/v1/teams/${team.id}/invitations/`, {
      method: 'POST',
      headers: { ...bearer(token), 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify({ email: 'invitee@example.com', role: 'member' }),
    });
    assert.equal(retry.status, 201);
    assert.equal(retry.headers.get('idempotency-replay'), 'true');
    assert.equal(await count(sql<{ n: number }>`select count(*) as n from invitations where team_id = ${team.id}`), 1);
  });
});
