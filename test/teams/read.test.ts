// The core read API of teams: the caller's teams, one team, its members. Another team's data is a
// 404 (never a 403), as are unknown and malformed ids, inactive teams and slash-less paths.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { runCli } from '../../src/main.ts';
import { bearer, startApp, type TestApp } from '../support/app.ts';

const silentIo = { out: () => {}, err: () => {} };
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('team read API', () => {
  let t: TestApp;
  let alice: { id: number; email: string };
  let bob: { id: number; email: string };
  let aliceToken: string;
  let bobToken: string;
  let acme: { id: string; slug: string };
  let beta: { id: string; slug: string };
  let bobs: { id: string; slug: string };

  before(async () => {
    t = await startApp();
    alice = await t.user({ firstName: 'Alice' });
    bob = await t.user({ firstName: 'Bob' });
    aliceToken = await t.token(alice.id, ['read:teams']);
    bobToken = await t.token(bob.id, ['read:teams']);
    // Created out of name order: the list is ordered by name.
    beta = await t.team(alice.id, 'Beta');
    acme = await t.team(alice.id, 'Acme');
    bobs = await t.team(bob.id, "Bob's own");
    await t.member(acme.id, bob.id, 'admin');
  });
  after(() => t.close());

  const get = (url: string, token = aliceToken) => t.inject({ url, headers: bearer(token) });

  function assertNotFound(res: { statusCode: number; headers: Record<string, unknown>; json(): any }) {
    assert.equal(res.statusCode, 404);
    assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
    assert.equal(res.json().detail, 'Not found.');
    assert.equal(res.json().request_id, res.headers['x-request-id']);
  }

  it("GET /api/v1/teams/ lists the caller's teams with their role, ordered by name", async () => {
    const res = await get('/api/v1/teams/');
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
    assert.deepEqual(res.json(), {
      count: 2,
      next: null,
      previous: null,
      results: [
        { id: acme.id, name: 'Acme', slug: 'acme', role: 'owner' },
        { id: beta.id, name: 'Beta', slug: 'beta', role: 'owner' },
      ],
    });
    const bobsList = (await get('/api/v1/teams/', bobToken)).json();
    assert.deepEqual(
      bobsList.results.map((r: { slug: string; role: string }) => [r.slug, r.role]),
      [
        ['acme', 'admin'],
        [bobs.slug, 'owner'],
      ],
    );
  });

  it('teams with the same name are ordered by id', async () => {
    const carol = await t.user();
    const token = await t.token(carol.id, ['read:teams']);
    const created = [await t.team(carol.id, 'Same'), await t.team(carol.id, 'Same'), await t.team(carol.id, 'Same')];
    const body = (await get('/api/v1/teams/', token)).json();
    assert.deepEqual(
      body.results.map((r: { id: string }) => r.id),
      created.map((c) => c.id).sort(),
    );
    assert.equal(new Set(body.results.map((r: { slug: string }) => r.slug)).size, 3, 'slugs are unique');
  });

  it("GET /api/v1/teams/{id}/ returns the team and the caller's role", async () => {
    const res = await get(`/api/v1/teams/${acme.id}/`, bobToken);
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.deepEqual(Object.keys(body).sort(), ['created_at', 'id', 'name', 'role', 'slug', 'updated_at']);
    assert.equal(body.id, acme.id);
    assert.match(body.id, UUID);
    assert.equal(body.name, 'Acme');
    assert.equal(body.slug, 'acme');
    assert.equal(body.role, 'admin');
    assert.match(body.created_at, ISO);
    assert.match(body.updated_at, ISO);
  });

  it('a team id in upper case is the same team', async () => {
    assert.equal((await get(`/api/v1/teams/${acme.id.toUpperCase()}/`)).statusCode, 200);
  });

  it('GET /api/v1/teams/{id}/members/ lists members with their role, by joined time', async () => {
    const res = await get(`/api/v1/teams/${acme.id}/members/`);
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.equal(body.count, 2);
    assert.equal(body.next, null);
    assert.equal(body.previous, null);
    assert.deepEqual(Object.keys(body.results[0]), [
      'id',
      'email',
      'first_name',
      'last_name',
      'display_name',
      'role',
      'joined_at',
    ]);
    assert.deepEqual(
      body.results.map((m: { id: number; email: string; first_name: string; role: string }) => [
        m.id,
        m.email,
        m.first_name,
        m.role,
      ]),
      [
        [alice.id, alice.email, 'Alice', 'owner'],
        [bob.id, bob.email, 'Bob', 'admin'],
      ],
    );
    for (const member of body.results) {
      assert.equal(typeof member.id, 'number');
      assert.match(member.joined_at, ISO);
    }
    assert.ok(body.results[0].joined_at <= body.results[1].joined_at);
  });

  it("another team's detail and members are 404, not 403", async () => {
    assertNotFound(await get(`/api/v1/teams/${bobs.id}/`));
    assertNotFound(await get(`/api/v1/teams/${bobs.id}/members/`));
    assertNotFound(await get(`/api/v1/teams/${beta.id}/`, bobToken));
    assertNotFound(await get(`/api/v1/teams/${beta.id}/members/`, bobToken));
  });

  for (const [label, id] of [
    ['an unknown UUID', randomUUID()],
    ['a malformed id', 'not-a-uuid'],
    ['the team slug', 'acme'],
    ['a numeric id', '1'],
    ['a UUID with a trailing character', '00000000-0000-0000-0000-0000000000000'],
    ['an SQL fragment', "x' or '1'='1"],
  ]) {
    it(`${label} is 404 for detail and members`, async () => {
      const encoded = encodeURIComponent(id);
      assertNotFound(await get(`/api/v1/teams/${encoded}/`));
      assertNotFound(await get(`/api/v1/teams/${encoded}/members/`));
    });
  }

  it('paths without the trailing slash are 404 problems, never redirects', async () => {
    for (const url of [
      '/api/v1/teams',
      `/api/v1/teams/${acme.id}`,
      `/api/v1/teams/${acme.id}/members`,
      '/api/v1/products',
    ]) {
      const res = await get(url);
      assertNotFound(res);
      assert.equal(res.headers.location, undefined);
    }
  });

  it('an inactive team disappears from list, detail and members; reactivation brings it back', async () => {
    const io = silentIo;
    assert.equal(await runCli(['team', 'deactivate', '--team', acme.slug], t.env, io), 0);
    for (const token of [aliceToken, bobToken]) {
      const list = (await get('/api/v1/teams/', token)).json();
      assert.ok(!list.results.some((r: { id: string }) => r.id === acme.id));
      assert.equal(list.count, list.results.length);
      assertNotFound(await get(`/api/v1/teams/${acme.id}/`, token));
      assertNotFound(await get(`/api/v1/teams/${acme.id}/members/`, token));
    }
    assert.equal(await runCli(['team', 'activate', '--team', acme.id], t.env, io), 0);
    assert.equal((await get(`/api/v1/teams/${acme.id}/`)).statusCode, 200);
    assert.equal((await get('/api/v1/teams/')).json().count, 2);
  });

  it('a user with no teams gets an empty page', async () => {
    const loner = await t.user();
    const res = await get('/api/v1/teams/', await t.token(loner.id, ['read:teams']));
    assert.deepEqual(res.json(), { count: 0, next: null, previous: null, results: [] });
  });
});
