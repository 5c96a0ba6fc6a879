// The member list's two paginations: by page number in joining order (then user id), pages 1 to
// PAGE_NUMBER_MAX_DEPTH, a deeper page a 400 that points to the cursor; and by cursor (page_size,
// cursor) newest joiner first, through any depth. Members are written straight into the tables (the
// argon2 hash of 120 users through createUser would take longer than the test).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PAGE_NUMBER_MAX_DEPTH } from '../../src/http/pagination.ts';
import { bearer, startApp, type TestApp } from '../support/app.ts';

const BASE_URL = 'https://api.example.com';
const MEMBERS = 121;

describe('member list pagination', () => {
  let t: TestApp;
  let token: string;
  let url: string;
  /** Member ids in page-number order: joining time, then user id. */
  let order: number[];

  before(async () => {
    t = await startApp({ BASE_URL });
    const owner = await t.user();
    token = await t.token(owner.id, ['read:teams']);
    const team = await t.team(owner.id);
    url = `/api/v1/teams/${team.id}/members/`;
    const db = t.ctx.db.kysely;
    const joined = (i: number) => new Date(Date.UTC(2030, 0, 1) + Math.floor(i / 2) * 1000).toISOString();
    for (let i = 0; i < MEMBERS - 1; i++) {
      const user = await db
        .insertInto('users')
        .values({
          email: `member-${i}-${process.pid}@example.com`,
          password_hash: 'x',
          first_name: '',
          last_name: '',
          display_name: '',
          is_active: 1,
          is_staff: 0,
          created_at: joined(0),
          updated_at: joined(0),
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      // Two members per second: ties on joined_at are broken by the user id.
      await db
        .insertInto('memberships')
        .values({ team_id: team.id, user_id: user.id, role: 'member', joined_at: joined(i) })
        .execute();
    }
    const rows = await db
      .selectFrom('memberships')
      .select(['user_id', 'joined_at'])
      .where('team_id', '=', team.id)
      .execute();
    order = rows
      .sort((a, b) => (a.joined_at < b.joined_at ? -1 : a.joined_at > b.joined_at ? 1 : a.user_id - b.user_id))
      .map((row) => row.user_id);
  });
  after(() => t.close());

  const get = (query: string) => t.inject({ url: `${url}${query}`, headers: bearer(token) });
  const path = (link: string) => link.slice(BASE_URL.length);

  it('by page number: 50 a page in joining order, then user id, with the count', async () => {
    const ids: number[] = [];
    for (let page = 1; page <= 3; page++) {
      const res = await get(page === 1 ? '' : `?page=${page}`);
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.equal(body.count, MEMBERS);
      assert.equal(body.next === null, page === 3);
      ids.push(...body.results.map((member: { id: number }) => member.id));
    }
    assert.deepEqual(ids, order);
  });

  it(`a page deeper than ${PAGE_NUMBER_MAX_DEPTH} is a 400 that points to cursor pagination; past the end within it stays 404`, async () => {
    const deep = await get(`?page=${PAGE_NUMBER_MAX_DEPTH + 1}`);
    assert.equal(deep.statusCode, 400, deep.body);
    assert.equal(deep.headers['content-type'], 'application/problem+json; charset=utf-8');
    assert.match(
      deep.json().detail,
      new RegExp(`stops at page ${PAGE_NUMBER_MAX_DEPTH}.*cursor pagination.*page_size`),
    );
    assert.deepEqual(
      deep.json().errors.map((e: { field: string }) => e.field),
      ['page'],
    );
    const past = await get(`?page=${PAGE_NUMBER_MAX_DEPTH}`);
    assert.equal(past.statusCode, 404, 'within the bound, a page past the end is the usual 404');
    assert.equal(past.json().detail, 'Invalid page.');
  });

  it('by cursor: page_size pages newest joiner first, no count, through every member and back', async () => {
    const ids: number[] = [];
    let link: string | null = '?page_size=40';
    const links: string[] = [];
    while (link) {
      const res = await get(link.startsWith('?') ? link : path(link).slice(url.length));
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.equal('count' in body, false);
      ids.push(...body.results.map((member: { id: number }) => member.id));
      links.push(link);
      link = body.next;
    }
    assert.deepEqual(ids, [...order].reverse());
    assert.equal(links.length, 4, '40 + 40 + 40 + 1');
    const last = (await get(path(links[3]).slice(url.length))).json();
    const back = await get(path(last.previous).slice(url.length));
    assert.deepEqual(
      back.json().results.map((member: { id: number }) => member.id),
      ids.slice(80, 120),
    );
  });

  it('page with page_size or cursor is a 400; so is a cursor the service did not make', async () => {
    const both = await get('?page=2&page_size=10');
    assert.equal(both.statusCode, 400);
    assert.deepEqual(
      both.json().errors.map((e: { field: string }) => e.field),
      ['page'],
    );
    const logs = await get('?cursor=WyJuIiwiMjAzMC0wMS0wMVQwMDowMDowMC4wMDBaIiwxXQ.AAAAAAAAAAAAAAAAAAAAAA');
    assert.equal(logs.statusCode, 400);
    assert.deepEqual(
      logs.json().errors.map((e: { field: string }) => e.field),
      ['cursor'],
    );
  });
});
