import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bearer, startApp, type TestApp } from '../support/app.ts';
import { runCli } from '../../src/main.ts';
import { decryptSecret } from '../../src/util/encryption.ts';
import { TEST_SECRET_KEY } from '../support/app.ts';
import { webhookFixture, type WebhookFixture } from './setup.ts';

const HOOK = 'https://127.0.0.1:9/hook';

describe('webhook subscriptions API', () => {
  let f: WebhookFixture;
  let t: TestApp;
  const path = (teamId: string, rest = '') => `/api/v1/teams/${teamId}/webhooks/${rest}`;
  before(async () => {
    f = await webhookFixture();
    t = f.t;
  });
  after(() => f.close());

  it('creates a subscription: 201 with a one-time 32-byte secret, stored encrypted', async () => {
    const res = await t.inject({
      method: 'POST',
      url: path(f.teamId),
      headers: bearer(f.token),
      payload: { url: HOOK, events: ['team.member.added'] },
    });
    assert.equal(res.statusCode, 201, res.body);
    const body = res.json();
    assert.deepEqual(Object.keys(body).sort(), [
      'created_at',
      'disabled_at',
      'disabled_reason',
      'events',
      'id',
      'is_active',
      'secret',
      'standard_webhooks',
      'team_id',
      'updated_at',
      'url',
    ]);
    assert.equal(Buffer.from(body.secret, 'base64').length, 32);
    assert.equal(body.is_active, true);
    assert.equal(body.standard_webhooks, true, 'Standard Webhooks headers by default');
    assert.deepEqual(body.events, ['team.member.added']);
    const row = await t.ctx.db.kysely
      .selectFrom('webhook_subscriptions')
      .selectAll()
      .where('id', '=', body.id)
      .executeTakeFirstOrThrow();
    assert.ok(!JSON.stringify(row).includes(body.secret), 'the secret is not stored in clear');
    assert.match(row.secret_encrypted, /^v1\.[0-9a-f]{8}\./, 'encrypted with a key id');
    assert.equal(decryptSecret(TEST_SECRET_KEY, row.secret_encrypted, `webhook:${body.id}`), body.secret);
    for (const url of [path(f.teamId), path(f.teamId, `${body.id}/`)]) {
      const read = await t.inject({ url, headers: bearer(f.token) });
      assert.equal(read.statusCode, 200);
      assert.ok(!read.body.includes(body.secret) && !read.body.includes('"secret"'), `${url} never shows the secret`);
    }
    const patched = await t.inject({
      method: 'PATCH',
      url: path(f.teamId, `${body.id}/`),
      headers: bearer(f.token),
      payload: { events: ['*', 'team.member.added'] },
    });
    assert.equal(patched.statusCode, 200);
    assert.deepEqual(patched.json().events, ['*']);
    assert.ok(!patched.body.includes('"secret"'));
    await t.inject({ method: 'DELETE', url: path(f.teamId, `${body.id}/`), headers: bearer(f.token) });
  });

  it('validates events and url with 400 problems that say why', async () => {
    const cases: [unknown, RegExp][] = [
      [{ url: HOOK, events: [] }, /at least one event/],
      [{ url: HOOK, events: ['team.member.added', 'nope.thing', 'bad'] }, /Unknown event types: nope\.thing, bad/],
      [{ url: 'http://example.com/hook', events: ['*'] }, /https/],
      [{ url: 'https://user:pw@example.com/hook', events: ['*'] }, /user name or password/],
      [{ url: `https://example.com/${'a'.repeat(2100)}`, events: ['*'] }, /2048/],
      [{ url: 'not a url', events: ['*'] }, /not a valid absolute URL/],
      [{ url: 'https://localhost/hook', events: ['*'] }, /localhost/],
      [{ url: 'https://10.0.0.1/hook', events: ['*'] }, /private/],
      [{ events: ['*'] }, /url/],
      [{ url: HOOK }, /events/],
      [{ url: HOOK, events: ['*'], standard_webhooks: 'no' }, /standard_webhooks/],
    ];
    for (const [payload, detail] of cases) {
      const res = await t.inject({
        method: 'POST',
        url: path(f.teamId),
        headers: bearer(f.token),
        payload: payload as object,
      });
      assert.equal(res.statusCode, 400, JSON.stringify(payload));
      assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
      assert.match(JSON.stringify(res.json()), detail, JSON.stringify(payload));
    }
    const count = await t.ctx.db.kysely
      .selectFrom('webhook_subscriptions')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('team_id', '=', f.teamId)
      .executeTakeFirstOrThrow();
    assert.equal(Number(count.n), 0, 'nothing was written');
  });

  it('refuses unknown event types on create and update with the address of the catalog, which lists the known ones', async () => {
    const catalog = 'http://testserver/api/v1/event-types/';
    const teamId = (await t.team(f.owner.id)).id;
    const created = await t.inject({
      method: 'POST',
      url: path(teamId),
      headers: bearer(f.token),
      payload: { url: HOOK, events: ['team.member.added', 'nope.thing'] },
    });
    assert.equal(created.statusCode, 400);
    const detail = `Unknown event type: nope.thing. The event types are listed at ${catalog}.`;
    assert.equal(created.json().detail, detail);
    assert.deepEqual(created.json().errors, [{ field: 'events', message: detail }]);
    const sub = await f.createSubscription(HOOK, ['team.member.added'], teamId);
    const patched = await t.inject({
      method: 'PATCH',
      url: path(teamId, `${sub.id}/`),
      headers: bearer(f.token),
      payload: { events: ['nope.thing', 'bad'] },
    });
    assert.equal(patched.statusCode, 400);
    assert.equal(
      patched.json().detail,
      `Unknown event types: nope.thing, bad. The event types are listed at ${catalog}.`,
    );
    const read = await t.inject({ url: path(teamId, `${sub.id}/`), headers: bearer(f.token) });
    assert.deepEqual(read.json().events, ['team.member.added'], 'unchanged');
    // The address answers, without a credential, with the types a subscription may name.
    const listed = await t.inject({ url: new URL(catalog).pathname });
    assert.equal(listed.statusCode, 200);
    const names = listed.json().results.map((entry: { name: string }) => entry.name);
    assert.ok(names.includes('team.member.added') && !names.includes('nope.thing'), names.join(', '));
  });

  it('caps a team at 10 subscriptions (409 beyond)', async () => {
    const teamId = (await t.team(f.owner.id)).id;
    for (let i = 0; i < 10; i++) await f.createSubscription(`${HOOK}${i}`, ['*'], teamId);
    const res = await t.inject({
      method: 'POST',
      url: path(teamId),
      headers: bearer(f.token),
      payload: { url: HOOK, events: ['*'] },
    });
    assert.equal(res.statusCode, 409);
    assert.match(res.json().detail, /at most 10/);
    const list = await t.inject({ url: path(teamId), headers: bearer(f.token) });
    assert.equal(list.json().count, 10);
    assert.equal(list.json().results.length, 10);
    assert.equal(list.json().next, null);
  });

  it('PATCH re-validates the url, toggles is_active; a bad PATCH changes nothing', async () => {
    const sub = await f.createSubscription(HOOK, ['team.member.added']);
    const bad = await t.inject({
      method: 'PATCH',
      url: path(f.teamId, `${sub.id}/`),
      headers: bearer(f.token),
      payload: { url: 'https://192.168.1.10/x', events: ['*'] },
    });
    assert.equal(bad.statusCode, 400);
    const unchanged = (await t.inject({ url: path(f.teamId, `${sub.id}/`), headers: bearer(f.token) })).json();
    assert.equal(unchanged.url, HOOK);
    assert.deepEqual(unchanged.events, ['team.member.added']);
    const off = await t.inject({
      method: 'PATCH',
      url: path(f.teamId, `${sub.id}/`),
      headers: bearer(f.token),
      payload: { is_active: false },
    });
    assert.equal(off.json().is_active, false);
    const on = await t.inject({
      method: 'PATCH',
      url: path(f.teamId, `${sub.id}/`),
      headers: bearer(f.token),
      payload: { is_active: true, url: 'https://127.0.0.1:8443/new' },
    });
    assert.equal(on.statusCode, 200);
    assert.equal(on.json().is_active, true);
    assert.equal(on.json().url, 'https://127.0.0.1:8443/new');
    const del = await t.inject({ method: 'DELETE', url: path(f.teamId, `${sub.id}/`), headers: bearer(f.token) });
    assert.equal(del.statusCode, 204);
    assert.equal((await t.inject({ url: path(f.teamId, `${sub.id}/`), headers: bearer(f.token) })).statusCode, 404);
  });

  describe('roles and scopes', () => {
    let teamId: string;
    let subId: string;
    const actors: Record<string, string> = {};
    before(async () => {
      teamId = (await t.team(f.owner.id)).id;
      subId = (await f.createSubscription(HOOK, ['*'], teamId)).id;
      for (const role of ['admin', 'member'] as const) {
        const user = await t.user();
        await t.member(teamId, user.id, role);
        actors[role] = await t.token(user.id, ['webhooks:manage']);
      }
      const outsider = await t.user();
      await t.team(outsider.id);
      actors.outsider = await t.token(outsider.id, ['webhooks:manage']);
      actors.owner = f.token;
      for (const scope of ['read:webhooks', 'write:webhooks', 'webhooks:manage', 'read:teams'])
        actors[scope] = await t.token(f.owner.id, [scope]);
      actors.fullAccess = await t.token(f.owner.id, []);
    });

    const requests = () =>
      [
        { name: 'list', method: 'GET', url: path(teamId), write: false },
        { name: 'get', method: 'GET', url: path(teamId, `${subId}/`), write: false },
        { name: 'logs', method: 'GET', url: path(teamId, `${subId}/logs/`), write: false },
        { name: 'patch', method: 'PATCH', url: path(teamId, `${subId}/`), write: true, payload: { events: ['*'] } },
        {
          name: 'create',
          method: 'POST',
          url: path(teamId),
          write: true,
          payload: { url: 'https://127.0.0.1:9/x', events: ['*'] },
        },
        { name: 'rotate', method: 'POST', url: path(teamId, `${subId}/rotate-secret/`), write: true },
        { name: 'test', method: 'POST', url: path(teamId, `${subId}/test/`), write: true },
      ] as const;

    for (const [actor, expectRead, expectWrite] of [
      ['owner', 'ok', 'ok'],
      ['admin', 'ok', 'ok'],
      ['member', 403, 403],
      ['outsider', 404, 404],
      ['read:webhooks', 'ok', 403],
      ['write:webhooks', 'ok', 'ok'],
      ['webhooks:manage', 'ok', 'ok'],
      ['read:teams', 403, 403],
      ['fullAccess', 'ok', 'ok'],
    ] as const) {
      it(`${actor}: reads ${expectRead}, changes ${expectWrite}`, async () => {
        for (const req of requests()) {
          const res = await t.inject({
            method: req.method,
            url: req.url,
            headers: bearer(actors[actor]),
            ...('payload' in req ? { payload: req.payload } : {}),
          });
          const expected = req.write ? expectWrite : expectRead;
          if (expected === 'ok')
            assert.ok(
              res.statusCode >= 200 && res.statusCode < 300,
              `${actor} ${req.name}: ${res.statusCode} ${res.body}`,
            );
          else assert.equal(res.statusCode, expected, `${actor} ${req.name}: ${res.body}`);
          if (req.name === 'create' && res.statusCode === 201) {
            await t.inject({ method: 'DELETE', url: path(teamId, `${res.json().id}/`), headers: bearer(f.token) });
          }
        }
      });
    }

    it("no credential is 401; another team's subscription and log are 404", async () => {
      assert.equal((await t.inject({ url: path(teamId) })).statusCode, 401);
      const otherTeam = (await t.team(f.owner.id)).id;
      const foreign = await f.createSubscription(HOOK, ['*'], otherTeam);
      // The owner of both teams addresses the subscription through the wrong team: 404.
      assert.equal((await t.inject({ url: path(teamId, `${foreign.id}/`), headers: bearer(f.token) })).statusCode, 404);
      assert.equal(
        (await t.inject({ url: path(teamId, `${foreign.id}/logs/`), headers: bearer(f.token) })).statusCode,
        404,
      );
      assert.equal(
        (await t.inject({ method: 'DELETE', url: path(teamId, `${foreign.id}/`), headers: bearer(f.token) }))
          .statusCode,
        404,
      );
      assert.equal((await t.inject({ url: path(teamId, 'not-a-uuid/'), headers: bearer(f.token) })).statusCode, 404);
      await t.ctx.db.kysely
        .insertInto('webhook_deliveries')
        .values({
          subscription_id: foreign.id,
          event_id: 'evt_x',
          event_type: 'team.member.added',
          payload: '{}',
          attempt: 6,
          status: 'dead_letter',
          created_at: new Date().toISOString(),
        })
        .execute();
      const log = await t.ctx.db.kysely
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('event_id', '=', 'evt_x')
        .executeTakeFirstOrThrow();
      assert.equal(
        (
          await t.inject({
            method: 'POST',
            url: path(teamId, `${subId}/logs/${log.id}/retry/`),
            headers: bearer(f.token),
          })
        ).statusCode,
        404,
      );
      assert.equal(
        (await t.inject({ url: path(otherTeam, `${foreign.id}/`), headers: bearer(actors.outsider) })).statusCode,
        404,
      );
    });
  });

  it('logs: cursor pagination newest first, filters, invalid cursor 400', async () => {
    const sub = await f.createSubscription(HOOK, ['*'], (await t.team(f.owner.id)).id);
    const rows = Array.from({ length: 120 }, (_, i) => ({
      subscription_id: sub.id,
      event_id: `evt_${i}`,
      event_type: i % 2 ? 'team.member.added' : 'user.profile.updated',
      payload: JSON.stringify({ id: `evt_${i}`, n: i }),
      attempt: 1,
      status: (i % 3 === 0 ? 'success' : 'failed') as 'success' | 'failed',
      status_code: i % 3 === 0 ? 200 : 500,
      duration_ms: 5,
      created_at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
    }));
    await t.ctx.db.kysely.insertInto('webhook_deliveries').values(rows).execute();
    const teamOf = (
      await t.ctx.db.kysely
        .selectFrom('webhook_subscriptions')
        .select('team_id')
        .where('id', '=', sub.id)
        .executeTakeFirstOrThrow()
    ).team_id;
    const first = await t.inject({ url: path(teamOf, `${sub.id}/logs/`), headers: bearer(f.token) });
    assert.equal(first.statusCode, 200);
    const page1 = first.json();
    assert.deepEqual(Object.keys(page1).sort(), ['next', 'previous', 'results']);
    assert.equal(page1.results.length, 50);
    assert.equal(page1.previous, null);
    assert.equal(page1.results[0].event_id, 'evt_119');
    assert.deepEqual(
      Object.keys(page1.results[0]).sort(),
      [
        'attempt',
        'created_at',
        'duration_ms',
        'event_id',
        'event_type',
        'id',
        'next_retry_at',
        'payload',
        'response_body',
        'status',
        'status_code',
        'subscription',
      ].sort(),
    );
    assert.deepEqual(page1.results[0].payload, { id: 'evt_119', n: 119 });
    assert.equal(page1.results[0].subscription, sub.id);
    assert.match(page1.next, /^http:\/\/testserver\/api\/v1\/teams\/.+\/logs\/\?cursor=/);
    const page2 = (
      await t.inject({ url: page1.next.replace('http://testserver', ''), headers: bearer(f.token) })
    ).json();
    assert.equal(page2.results[0].event_id, 'evt_69');
    const page3 = (
      await t.inject({ url: page2.next.replace('http://testserver', ''), headers: bearer(f.token) })
    ).json();
    assert.equal(page3.results.length, 20);
    assert.equal(page3.next, null);
    const back = (
      await t.inject({ url: page3.previous.replace('http://testserver', ''), headers: bearer(f.token) })
    ).json();
    assert.deepEqual(
      back.results.map((r: { event_id: string }) => r.event_id),
      page2.results.map((r: { event_id: string }) => r.event_id),
    );
    const filtered = (
      await t.inject({
        url: path(teamOf, `${sub.id}/logs/?status=success&event_type=team.member.added`),
        headers: bearer(f.token),
      })
    ).json();
    assert.ok(filtered.results.length > 0);
    assert.ok(
      filtered.results.every(
        (r: { status: string; event_type: string }) => r.status === 'success' && r.event_type === 'team.member.added',
      ),
    );
    const one = (
      await t.inject({ url: path(teamOf, `${sub.id}/logs/?event_id=evt_7`), headers: bearer(f.token) })
    ).json();
    assert.deepEqual(
      one.results.map((r: { event_id: string }) => r.event_id),
      ['evt_7'],
    );
    assert.equal(
      (await t.inject({ url: path(teamOf, `${sub.id}/logs/?cursor=garbage`), headers: bearer(f.token) })).statusCode,
      400,
    );
    // A cursor of another subscription's log is refused, not followed.
    const otherSub = await f.createSubscription(HOOK, ['*'], teamOf);
    const cursor = new URL(page1.next).searchParams.get('cursor')!;
    assert.equal(
      (await t.inject({ url: path(teamOf, `${otherSub.id}/logs/?cursor=${cursor}`), headers: bearer(f.token) }))
        .statusCode,
      400,
    );
    const small = (
      await t.inject({ url: path(teamOf, `${sub.id}/logs/?page_size=7`), headers: bearer(f.token) })
    ).json();
    assert.equal(small.results.length, 7);
    assert.equal(
      (await t.inject({ url: path(teamOf, `${sub.id}/logs/?status=bogus`), headers: bearer(f.token) })).statusCode,
      400,
    );
  });

  it('a retry of an unknown log entry is 404, of a non-dead entry 409', async () => {
    const sub = await f.createSubscription(HOOK, ['*']);
    assert.equal(
      (
        await t.inject({
          method: 'POST',
          url: path(f.teamId, `${sub.id}/logs/999999/retry/`),
          headers: bearer(f.token),
        })
      ).statusCode,
      404,
    );
    await t.ctx.db.kysely
      .insertInto('webhook_deliveries')
      .values({
        subscription_id: sub.id,
        event_id: 'evt_ok',
        event_type: 'team.member.added',
        payload: '{}',
        attempt: 1,
        status: 'success',
        created_at: new Date().toISOString(),
      })
      .execute();
    const log = await t.ctx.db.kysely
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('event_id', '=', 'evt_ok')
      .executeTakeFirstOrThrow();
    const res = await t.inject({
      method: 'POST',
      url: path(f.teamId, `${sub.id}/logs/${log.id}/retry/`),
      headers: bearer(f.token),
    });
    assert.equal(res.statusCode, 409);
    await t.inject({ method: 'DELETE', url: path(f.teamId, `${sub.id}/`), headers: bearer(f.token) });
  });
});

describe('SERVICE_WEBHOOKS_ENABLED off (the default)', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp({ SERVICE_WEBHOOKS_ALLOWED_CIDRS: '127.0.0.1/32' });
  });
  after(() => t.close());

  it('subscriptions can be managed, but events write nothing and the test endpoint is 409', async () => {
    const owner = await t.user();
    const token = await t.token(owner.id, ['webhooks:manage']);
    const team = await t.team(owner.id);
    const res = await t.inject({
      method: 'POST',
      url: `/api/v1/teams/${team.id}/webhooks/`,
      headers: bearer(token),
      payload: { url: HOOK, events: ['*'] },
    });
    assert.equal(res.statusCode, 201);
    const recorded = await t.ctx.db.kysely.transaction().execute((trx) =>
      t.ctx.events.emit(trx, {
        type: 'team.member.added',
        teamId: team.id,
        data: { user_id: 1, email: 'a@b.c', role: 'member' },
      }),
    );
    assert.deepEqual(recorded, []);
    const events = await t.ctx.db.kysely.selectFrom('events').select('id').execute();
    const deliveries = await t.ctx.db.kysely.selectFrom('webhook_deliveries').select('id').execute();
    assert.equal(events.length + deliveries.length, 0);
    const test = await t.inject({
      method: 'POST',
      url: `/api/v1/teams/${team.id}/webhooks/${res.json().id}/test/`,
      headers: bearer(token),
    });
    assert.equal(test.statusCode, 409);
    const err: string[] = [];
    const code = await runCli(['webhooks', 'retry', '--subscription', res.json().id, '--all-dead'], t.env, {
      out: () => {},
      err: (s) => err.push(s),
    });
    assert.equal(code, 1);
    assert.match(err.join('\n'), /SERVICE_WEBHOOKS_ENABLED/);
  });
});
