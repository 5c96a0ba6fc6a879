// Page-number pagination edges, seen through GET /api/v1/teams/ (and members): exactly 50, 51 and
// 101 items; pages 0, 3, `abc`, negative and past the end → 404 "Invalid page."; next/previous are
// absolute URLs built on BASE_URL (never the Host header) that keep the other query parameters.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bearer, startApp, type TestApp } from '../support/app.ts';

const BASE_URL = 'https://api.example.com:8443';

describe('page-number pagination', () => {
  let t: TestApp;
  const tokens: Record<number, string> = {};
  const names: Record<number, string[]> = {};

  before(async () => {
    t = await startApp({ BASE_URL });
    for (const size of [0, 50, 51, 101]) {
      const user = await t.user();
      tokens[size] = await t.token(user.id, ['read:teams']);
      // Created in reverse order so that the listing order (name, then id) is not insertion order.
      names[size] = Array.from({ length: size }, (_, i) => `s${size} team ${String(i).padStart(3, '0')}`);
      for (const name of [...names[size]].reverse()) await t.team(user.id, name);
    }
  });
  after(() => t.close());

  const list = (size: number, query = '', headers: Record<string, string> = {}) =>
    t.inject({ url: `/api/v1/teams/${query}`, headers: { ...bearer(tokens[size]), ...headers } });

  async function page(size: number, query = '') {
    const res = await list(size, query);
    assert.equal(res.statusCode, 200, `${query}: ${res.body}`);
    return res.json() as { count: number; next: string | null; previous: string | null; results: { name: string }[] };
  }

  async function assertInvalidPage(size: number, query: string) {
    const res = await list(size, query);
    assert.equal(res.statusCode, 404, `${query} → ${res.statusCode}`);
    assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
    assert.equal(res.json().detail, 'Invalid page.');
    assert.equal(res.json().request_id, res.headers['x-request-id']);
  }

  const self = `${BASE_URL}/api/v1/teams/`;

  it('0 items: page 1 is an empty envelope, page 2 is 404', async () => {
    assert.deepEqual(await page(0), { count: 0, next: null, previous: null, results: [] });
    await assertInvalidPage(0, '?page=2');
  });

  it('exactly 50 items: one full page, no links; page 2 is 404', async () => {
    const first = await page(50);
    assert.equal(first.count, 50);
    assert.equal(first.results.length, 50);
    assert.equal(first.next, null);
    assert.equal(first.previous, null);
    assert.deepEqual(
      first.results.map((r) => r.name),
      names[50],
    );
    await assertInvalidPage(50, '?page=2');
  });

  it('51 items: 50 then 1, with next and previous links', async () => {
    const first = await page(51);
    assert.equal(first.count, 51);
    assert.equal(first.results.length, 50);
    assert.equal(first.next, `${self}?page=2`);
    assert.equal(first.previous, null);
    const second = await page(51, '?page=2');
    assert.equal(second.count, 51);
    assert.deepEqual(
      second.results.map((r) => r.name),
      [names[51][50]],
    );
    assert.equal(second.next, null);
    // Page 1 is the bare URL, as a client would first have called it.
    assert.equal(second.previous, self);
    assert.deepEqual(
      [...first.results, ...second.results].map((r) => r.name),
      names[51],
    );
    await assertInvalidPage(51, '?page=3');
  });

  it('101 items: 50, 50, 1; page 3 exists, page 4 does not', async () => {
    const first = await page(101, '?page=1');
    assert.equal(first.next, `${self}?page=2`);
    assert.equal(first.previous, null);
    const second = await page(101, '?page=2');
    assert.equal(second.next, `${self}?page=3`);
    assert.equal(second.previous, self);
    const third = await page(101, '?page=3');
    assert.equal(third.results.length, 1);
    assert.equal(third.next, null);
    assert.equal(third.previous, `${self}?page=2`);
    assert.deepEqual(
      [...first.results, ...second.results, ...third.results].map((r) => r.name),
      names[101],
    );
    for (const body of [first, second, third]) assert.equal(body.count, 101);
    await assertInvalidPage(101, '?page=4');
  });

  it('following next links walks every item exactly once', async () => {
    const seen: string[] = [];
    let url: string | null = self;
    let pages = 0;
    while (url) {
      const target: URL = new URL(url);
      assert.equal(target.origin, BASE_URL);
      const body = await page(101, target.search);
      seen.push(...body.results.map((r) => r.name));
      url = body.next;
      pages++;
    }
    assert.equal(pages, 3);
    assert.deepEqual(seen, names[101]);
  });

  for (const value of ['0', '-1', 'abc', '1.5', '', '1e1', '0x2', '99999999999', '%20']) {
    it(`page=${JSON.stringify(value)} → 404 "Invalid page."`, async () => {
      await assertInvalidPage(101, `?page=${value}`);
    });
  }

  it('a repeated page parameter → 404 "Invalid page." (not a schema error)', async () => {
    await assertInvalidPage(101, '?page=1&page=2');
  });

  it('page 3 of 51 items → 404; a huge page number → 404', async () => {
    await assertInvalidPage(51, '?page=3');
    await assertInvalidPage(101, '?page=999999999');
  });

  it('links keep the other query parameters and come from BASE_URL, not the Host header', async () => {
    const res = await list(101, '?search=x%20y&page=2&tag=a&tag=b', { host: 'evil.example' });
    assert.equal(res.statusCode, 200);
    const body = res.json();
    const next = new URL(body.next);
    const previous = new URL(body.previous);
    for (const link of [next, previous]) {
      assert.equal(link.origin, BASE_URL);
      assert.equal(link.pathname, '/api/v1/teams/');
      assert.equal(link.searchParams.get('search'), 'x y');
      assert.deepEqual(link.searchParams.getAll('tag'), ['a', 'b']);
    }
    assert.equal(next.searchParams.get('page'), '3');
    assert.equal(previous.searchParams.has('page'), false);
  });

  it('members are paginated the same way (51 members)', async () => {
    const owner = await t.user();
    const token = await t.token(owner.id, ['read:teams']);
    const team = await t.team(owner.id, 'Big team');
    // Members inserted directly (hashing 50 passwords would only slow the test down), with joined
    // times that run against user-id order and tie in pairs, to show the order is joined time
    // first and user id second.
    const db = t.ctx.db.kysely;
    const joined = (i: number) => new Date(Date.UTC(2030, 0, 1, 0, 0, Math.floor((49 - i) / 2))).toISOString();
    const ids: number[] = [];
    for (let i = 0; i < 50; i++) {
      const now = new Date().toISOString();
      const { id } = await db
        .insertInto('users')
        .values({
          email: `m${i}-${process.pid}@example.com`,
          password_hash: 'x',
          first_name: '',
          last_name: '',
          display_name: '',
          email_verified_at: null,
          is_active: 1,
          is_staff: 0,
          created_at: now,
          updated_at: now,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      ids.push(id);
    }
    // Insert memberships in shuffled order so that id order and joined order differ.
    for (const i of [...ids.keys()].sort((a, b) => ((a * 7919) % 50) - ((b * 7919) % 50))) {
      await db
        .insertInto('memberships')
        .values({ team_id: team.id, user_id: ids[i], role: 'member', joined_at: joined(i) })
        .execute();
    }
    const url = `/api/v1/teams/${team.id}/members/`;
    const first = await t.inject({ url: `${url}?x=1`, headers: bearer(token) });
    assert.equal(first.statusCode, 200);
    const a = first.json();
    assert.equal(a.count, 51);
    assert.equal(a.results.length, 50);
    assert.equal(a.next, `${BASE_URL}${url}?x=1&page=2`);
    assert.equal(a.results[0].id, owner.id, 'the owner joined first');
    const second = await t.inject({ url: `${url}?page=2&x=1`, headers: bearer(token) });
    const b = second.json();
    assert.equal(b.results.length, 1);
    assert.equal(b.previous, `${BASE_URL}${url}?x=1`);
    const expected = ids
      .map((id, i) => ({ id, joined: joined(i) }))
      .sort((x, y) => (x.joined < y.joined ? -1 : x.joined > y.joined ? 1 : x.id - y.id))
      .map((m) => m.id);
    assert.notDeepEqual(expected, ids);
    assert.deepEqual(
      [...a.results, ...b.results].map((m: { id: number }) => m.id),
      [owner.id, ...expected],
    );
    const third = await t.inject({ url: `${url}?page=3`, headers: bearer(token) });
    assert.equal(third.statusCode, 404);
    assert.equal(third.json().detail, 'Invalid page.');
  });
});
