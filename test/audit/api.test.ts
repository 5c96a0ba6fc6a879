// GET /api/v1/teams/{team_id}/audit-log/: who may read it (owner, admin; a member 403, anyone else
// 404), newest first with cursor pages, the filters and their 400s, the retention purge, and the
// SERVICE_AUDIT_RETENTION_DAYS floor.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { AUDIT_ACTION_NAMES, type AuditAction } from '../../src/audit/actions.ts';
import type { Actor } from '../../src/audit/actor.ts';
import { recordAudit } from '../../src/audit/record.ts';
import { purgeAuditEntries } from '../../src/audit/store.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { ROOT } from '../cli/cli-helpers.ts';
import { bearer, startApp, type TestApp } from '../support/app.ts';
import { as, castTeam, makeCast, type Cast } from '../teams/fixtures.ts';

const path = (teamId: string, query = '') => `/api/v1/teams/${teamId}/audit-log/${query}`;

const userActor = (user: { id: number; email: string }): Actor => ({
  type: 'user',
  id: user.id,
  email: user.email,
  credential: { type: 'pat', id: '1' },
  context: { ip: '127.0.0.1', user_agent: 'test', request_id: 'req-1' },
});

describe('the audit-log API', () => {
  let t: TestApp;
  let cast: Cast;
  let teamId: string;
  /** The seeded entries' ids, oldest first; each at 2001-01-0<i+1>T00:00:00.000Z. */
  const seeded: { id: number; action: AuditAction; actorId: number }[] = [];

  before(async () => {
    t = await startApp();
    cast = await makeCast(t);
    teamId = await castTeam(t, cast);
    const plan: [AuditAction, Cast[keyof Cast]][] = [
      ['team.updated', cast.owner],
      ['team.member.role_changed', cast.owner],
      ['team.invitation.created', cast.admin],
      ['team.updated', cast.admin],
      ['team.invitation.revoked', cast.owner],
      ['team.updated', cast.owner],
      ['team.member.removed', cast.admin],
    ];
    const db = t.ctx.db.kysely;
    for (const [i, [action, user]] of plan.entries()) {
      await db
        .transaction()
        .execute((trx) => recordAudit(trx, userActor(user), { teamId, action, targetId: teamId, data: { n: i } }));
      const row = await db
        .selectFrom('audit_entries')
        .select('id')
        .where('data', '=', JSON.stringify({ n: i }))
        .executeTakeFirstOrThrow();
      // Backdated, so the filters below see these entries only, whatever else the fixtures recorded.
      await db
        .updateTable('audit_entries')
        .set({ occurred_at: `2001-01-0${i + 1}T00:00:00.000Z` })
        .where('id', '=', row.id)
        .execute();
      seeded.push({ id: Number(row.id), action, actorId: user.id });
    }
  });
  after(() => t?.close());

  const ids = (body: { results: { id: number }[] }) => body.results.map((entry) => entry.id);
  const newestFirst = () => seeded.map((entry) => entry.id).reverse();

  it('owners and admins read it; a member is 403, an outsider and an unknown or malformed team 404', async () => {
    for (const reader of [cast.owner, cast.admin]) {
      const res = await t.inject({ url: path(teamId, '?until=2002-01-01'), headers: as(reader) });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(ids(res.json()), newestFirst());
    }
    const member = await t.inject({ url: path(teamId), headers: as(cast.member) });
    assert.equal(member.statusCode, 403);
    assert.match(member.json().detail, /owners and admins/);
    for (const url of [path(teamId), path('00000000-0000-4000-8000-000000000000'), path('not-a-uuid')]) {
      const res = await t.inject({ url, headers: as(url === path(teamId) ? cast.outsider : cast.owner) });
      assert.equal(res.statusCode, 404, url);
    }
  });

  it('needs read:teams (another scope is 403, no credential 401)', async () => {
    const profileOnly = await t.token(cast.owner.id, ['read:profile']);
    assert.equal((await t.inject({ url: path(teamId), headers: bearer(profileOnly) })).statusCode, 403);
    assert.equal((await t.inject({ url: path(teamId) })).statusCode, 401);
  });

  it('an entry has the documented shape', async () => {
    const res = await t.inject({ url: path(teamId, '?until=2002-01-01&page_size=1'), headers: as(cast.owner) });
    const [entry] = res.json().results;
    assert.deepEqual(entry, {
      id: seeded[6].id,
      occurred_at: '2001-01-07T00:00:00.000Z',
      action: 'team.member.removed',
      actor: { type: 'user', id: cast.admin.id, email: cast.admin.email },
      credential: { type: 'pat', id: '1' },
      target: { type: 'user', id: teamId },
      context: { ip: '127.0.0.1', user_agent: 'test', request_id: 'req-1' },
      data: { n: 6 },
    });
  });

  it('pages newest first with next and previous links, and no entry twice', async () => {
    const first = (
      await t.inject({ url: path(teamId, '?until=2002-01-01&page_size=3'), headers: as(cast.owner) })
    ).json();
    assert.equal(first.previous, null);
    assert.ok(first.next.startsWith(`http://testserver${path(teamId)}`));
    assert.equal(new URL(first.next).searchParams.get('until'), '2002-01-01', 'the filters are kept');
    const second = (
      await t.inject({ url: first.next.replace('http://testserver', ''), headers: as(cast.owner) })
    ).json();
    const third = (
      await t.inject({ url: second.next.replace('http://testserver', ''), headers: as(cast.owner) })
    ).json();
    assert.equal(third.next, null);
    assert.deepEqual([...ids(first), ...ids(second), ...ids(third)], newestFirst());
    const back = (
      await t.inject({ url: third.previous.replace('http://testserver', ''), headers: as(cast.owner) })
    ).json();
    assert.deepEqual(ids(back), ids(second));
  });

  it('filters by action, actor_id, since (inclusive) and until (exclusive), combined', async () => {
    const get = async (query: string) => {
      const res = await t.inject({ url: path(teamId, query), headers: as(cast.owner) });
      assert.equal(res.statusCode, 200, res.body);
      return ids(res.json());
    };
    const expect = (keep: (entry: (typeof seeded)[number], i: number) => boolean) =>
      seeded
        .filter(keep)
        .map((entry) => entry.id)
        .reverse();
    assert.deepEqual(
      await get('?action=team.updated&until=2002-01-01'),
      expect((e) => e.action === 'team.updated'),
    );
    assert.deepEqual(
      await get(`?actor_id=${cast.admin.id}&until=2002-01-01`),
      expect((e) => e.actorId === cast.admin.id),
    );
    assert.deepEqual(
      await get('?since=2001-01-03&until=2001-01-05T00:00:00Z'),
      expect((_, i) => i === 2 || i === 3),
    );
    assert.deepEqual(
      await get('?since=2001-01-03T01:00:00%2B01:00&until=2001-01-05'),
      expect((_, i) => i === 2 || i === 3),
      'an offset counts',
    );
    assert.deepEqual(
      await get(`?action=team.updated&actor_id=${cast.owner.id}&since=2001-01-02&until=2002-01-01`),
      expect((e, i) => i >= 1 && e.action === 'team.updated' && e.actorId === cast.owner.id),
    );
    assert.deepEqual(await get('?action=team.deactivated'), []);
  });

  it('a bad filter value is 400 naming the field, and a non-member still gets 404', async () => {
    const cases: [string, string][] = [
      ['since=yesterday', 'since'],
      ['since=2001-02-30', 'since'],
      ['since=2001-01-01T10:00:00', 'since'],
      ['until=2001-13-01', 'until'],
      ['until=2001-01-01T25:00:00Z', 'until'],
      ['since=2001-01-05&until=2001-01-05', 'until'],
      ['actor_id=abc', 'actor_id'],
      ['actor_id=-1', 'actor_id'],
      ['action=team.exploded', 'action'],
      ['page_size=0', 'page_size'],
      ['cursor=forged', 'cursor'],
    ];
    for (const [query, field] of cases) {
      const res = await t.inject({ url: path(teamId, `?${query}`), headers: as(cast.owner) });
      assert.equal(res.statusCode, 400, query);
      assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
      assert.deepEqual(
        res.json().errors.map((e: { field: string }) => e.field),
        [field],
        query,
      );
    }
    assert.equal(
      (await t.inject({ url: path(teamId, '?since=yesterday'), headers: as(cast.outsider) })).statusCode,
      404,
    );
  });

  it('has no route that edits or deletes an entry', async () => {
    const entry = path(teamId, `${seeded[0].id}/`);
    for (const method of ['PATCH', 'PUT', 'DELETE'] as const) {
      const res = await t.inject({ method, url: entry, headers: as(cast.owner), payload: {} });
      assert.equal(res.statusCode, 404, method);
      const onList = await t.inject({ method, url: path(teamId), headers: as(cast.owner), payload: {} });
      assert.equal(onList.statusCode, 405, `${method} on the list`);
    }
    assert.equal(
      (await t.ctx.db.kysely.selectFrom('audit_entries').select('id').where('id', '=', seeded[0].id).execute()).length,
      1,
    );
  });
});

describe('the audit retention purge', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp();
  });
  after(() => t?.close());

  it('deletes the entries older than the retention, and only those', async () => {
    const owner = await t.user();
    const teamId = (await t.team(owner.id)).id;
    const db = t.ctx.db.kysely;
    const now = Date.now();
    const day = 86400_000;
    const ages = [400, 366, 365.01, 364.99, 30, 0];
    for (const [i, age] of ages.entries()) {
      await db
        .transaction()
        .execute((trx) =>
          recordAudit(trx, userActor(owner), { teamId, action: 'team.updated', targetId: teamId, data: { age: i } }),
        );
      await db
        .updateTable('audit_entries')
        .set({ occurred_at: new Date(now - age * day).toISOString() })
        .where('data', '=', JSON.stringify({ age: i }))
        .execute();
    }
    const kept = async () =>
      (
        await db
          .selectFrom('audit_entries')
          .select('data')
          .where('data', 'like', '{"age":%')
          .orderBy('occurred_at')
          .execute()
      ).map((r) => JSON.parse(r.data).age);
    assert.equal(await purgeAuditEntries(db, 365, now), 3);
    assert.deepEqual(await kept(), [3, 4, 5]);
    assert.equal(await purgeAuditEntries(db, 365, now), 0, 'a second run deletes nothing');
    assert.equal(await purgeAuditEntries(db, 30, now), 1, 'an entry exactly 30 days old is kept');
    assert.deepEqual(await kept(), [4, 5]);
  });
});

describe('SERVICE_AUDIT_RETENTION_DAYS', () => {
  it('is 365 by default, takes 30 and more, and refuses less than 30 with a message naming it', () => {
    assert.equal(loadConfig({}).auditRetentionDays, 365);
    assert.equal(loadConfig({ SERVICE_AUDIT_RETENTION_DAYS: '30' }).auditRetentionDays, 30);
    assert.equal(loadConfig({ SERVICE_AUDIT_RETENTION_DAYS: '3650' }).auditRetentionDays, 3650);
    assert.throws(
      () => loadConfig({ SERVICE_AUDIT_RETENTION_DAYS: '29' }),
      (error: Error) =>
        error instanceof ConfigError && /SERVICE_AUDIT_RETENTION_DAYS must be between 30 and/.test(error.message),
    );
  });
});

describe('docs/audit.md', () => {
  it('lists every registered action, and no other', () => {
    const doc = fs.readFileSync(`${ROOT}/docs/audit.md`, 'utf8');
    const table = doc.slice(doc.indexOf('## What is recorded'), doc.indexOf('## Who made the change'));
    const listed = [...table.matchAll(/^\| `([a-z_.]+)`(?:, `([a-z_.]+)`)? \|/gm)].flatMap((m) =>
      m.slice(1).filter(Boolean),
    );
    assert.deepEqual([...listed].sort(), [...AUDIT_ACTION_NAMES].sort());
  });
});
