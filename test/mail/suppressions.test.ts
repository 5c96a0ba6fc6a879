import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { runCli } from '../../src/main.ts';
import { bearer, startApp, type TestApp } from '../support/app.ts';

let t: TestApp;
let staffToken: string;
let staffId: number;

async function suppress(email: string, createdAt: string, released = false) {
  await t.ctx.db.kysely
    .insertInto('mail_suppressions')
    .values({
      email,
      reason: 'bounce',
      event_key: `evt-${email}`,
      occurred_at: createdAt,
      created_at: createdAt,
      released_at: released ? createdAt : null,
    })
    .execute();
}

/** The suppression row of `email`, as stored. */
function suppressionOf(email: string) {
  return t.ctx.db.kysely
    .selectFrom('mail_suppressions')
    .selectAll()
    .where('email', '=', email)
    .executeTakeFirstOrThrow();
}

async function cli(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(argv, t.env, { out: (s) => out.push(s), err: (s) => err.push(s) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

// The hooks live inside this describe, not at the top level: files may share a process
// (`npm run test:fast`), where a top-level hook would run around every other file's tests too.
describe('mail suppressions', () => {
  before(async () => {
    t = await startApp();
    const staff = await t.user({ staff: true });
    staffId = staff.id;
    staffToken = await t.token(staff.id, ['admin']);
  });
  after(() => t.close());
  beforeEach(async () => {
    await t.ctx.db.kysely.deleteFrom('mail_suppressions').execute();
    await suppress('old@example.com', '2026-01-01T00:00:00.000Z');
    await suppress('mid@example.com', '2026-02-01T00:00:00.000Z');
    await suppress('new@example.com', '2026-03-01T00:00:00.000Z');
    await suppress('gone@example.com', '2026-03-02T00:00:00.000Z', true);
  });

  describe('admin API: suppressions', () => {
    it('lists active suppressions newest first, cursor-paginated', async () => {
      const first = await t.inject({ url: '/api/v1/admin/suppressions/?page_size=2', headers: bearer(staffToken) });
      assert.equal(first.statusCode, 200);
      const page = first.json();
      assert.deepEqual(
        page.results.map((r: { email: string }) => r.email),
        ['new@example.com', 'mid@example.com'],
      );
      assert.deepEqual(Object.keys(page.results[0]).sort(), [
        'created_at',
        'email',
        'event_key',
        'occurred_at',
        'reason',
      ]);
      assert.equal(page.count, undefined);
      assert.ok(page.next);
      const second = await t.inject({
        url: new URL(page.next).pathname + new URL(page.next).search,
        headers: bearer(staffToken),
      });
      assert.deepEqual(
        second.json().results.map((r: { email: string }) => r.email),
        ['old@example.com'],
      );
      assert.equal(second.json().next, null);
    });

    it('filters by address', async () => {
      const res = await t.inject({
        url: '/api/v1/admin/suppressions/?email=MID@example.com',
        headers: bearer(staffToken),
      });
      assert.deepEqual(
        res.json().results.map((r: { email: string }) => r.email),
        ['mid@example.com'],
      );
    });

    it('needs a staff user holding the admin scope', async () => {
      const plain = await t.user();
      const plainAdminScope = await t.token(plain.id, ['admin']);
      const staffWithoutScope = await t.token(staffId, ['read:profile']);
      assert.equal((await t.inject({ url: '/api/v1/admin/suppressions/' })).statusCode, 401);
      assert.equal(
        (await t.inject({ url: '/api/v1/admin/suppressions/', headers: bearer(plainAdminScope) })).statusCode,
        403,
      );
      assert.equal(
        (await t.inject({ url: '/api/v1/admin/suppressions/', headers: bearer(staffWithoutScope) })).statusCode,
        403,
      );
      const del = await t.inject({
        method: 'DELETE',
        url: '/api/v1/admin/suppressions/old@example.com/',
        headers: bearer(plainAdminScope),
      });
      assert.equal(del.statusCode, 403);
      assert.equal((await suppressionOf('old@example.com')).released_at, null);
    });

    it('DELETE releases the address, recording who, when and why', async () => {
      const res = await t.inject({
        method: 'DELETE',
        url: '/api/v1/admin/suppressions/OLD%40example.com/',
        headers: { ...bearer(staffToken), 'content-type': 'application/json' },
        payload: { reason: 'mailbox restored' },
      });
      assert.equal(res.statusCode, 204);
      const row = await suppressionOf('old@example.com');
      assert.ok(row.released_at);
      assert.match(row.released_by!, new RegExp(`^user:${staffId} `));
      assert.equal(row.release_reason, 'mailbox restored');
      const list = await t.inject({ url: '/api/v1/admin/suppressions/', headers: bearer(staffToken) });
      assert.ok(!list.json().results.some((r: { email: string }) => r.email === 'old@example.com'));
      const again = await t.inject({
        method: 'DELETE',
        url: '/api/v1/admin/suppressions/old@example.com/',
        headers: bearer(staffToken),
      });
      assert.equal(again.statusCode, 404);
      const released = await t.inject({
        method: 'DELETE',
        url: '/api/v1/admin/suppressions/gone@example.com/',
        headers: bearer(staffToken),
      });
      assert.equal(released.statusCode, 404);
    });

    it('is described in the OpenAPI document', async () => {
      const doc = (await t.inject({ url: '/api/schema/' })).json();
      assert.equal(doc.paths['/api/v1/admin/suppressions/'].get.operationId, 'list_suppressions');
      assert.deepEqual(doc.paths['/api/v1/admin/suppressions/{email}/'].delete.security, [
        { oauth2: ['admin'] },
        { bearerAuth: [] },
      ]);
    });
  });

  describe('svc suppression', () => {
    it('list prints the active suppressions, --json as an array', async () => {
      const json = await cli('suppression', 'list', '--json');
      assert.equal(json.code, 0, json.err);
      assert.deepEqual(
        JSON.parse(json.out).map((r: { email: string }) => r.email),
        ['new@example.com', 'mid@example.com', 'old@example.com'],
      );
      const one = await cli('suppression', 'list', '--email', 'Mid <MID@example.com>');
      assert.equal(one.code, 0);
      assert.match(one.out, /^ID\s+EMAIL\s+REASON/);
      assert.match(one.out, /mid@example\.com\s+bounce/);
      assert.doesNotMatch(one.out, /new@example\.com/);
    });

    it('release records who and why', async () => {
      const res = await cli(
        'suppression',
        'release',
        '--email',
        'new@example.com',
        '--reason',
        'customer asked',
        '--by',
        'alice',
      );
      assert.equal(res.code, 0, res.err);
      const row = await suppressionOf('new@example.com');
      assert.equal(row.released_by, 'alice');
      assert.equal(row.release_reason, 'customer asked');
      const defaultBy = await cli('suppression', 'release', '--email', 'mid@example.com', '--reason', 'fixed');
      assert.equal(defaultBy.code, 0);
      const mid = await suppressionOf('mid@example.com');
      assert.match(mid.released_by!, /^os:/);
    });

    it('refuses bad arguments (exit 2) and unknown addresses (exit 1)', async () => {
      assert.equal((await cli('suppression', 'release', '--email', 'old@example.com')).code, 2);
      assert.equal((await cli('suppression', 'release', '--email', 'not-an-address', '--reason', 'x')).code, 2);
      const unknown = await cli('suppression', 'release', '--email', 'nobody@example.com', '--reason', 'x');
      assert.equal(unknown.code, 1);
      assert.match(unknown.err, /not suppressed/);
      assert.equal(
        (await t.ctx.db.kysely.selectFrom('mail_suppressions').select('id').where('released_at', 'is', null).execute())
          .length,
        3,
      );
    });
  });
});
