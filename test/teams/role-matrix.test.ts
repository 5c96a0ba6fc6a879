// Every mutating teams endpoint × owner, admin, member, non-member: the exact status, the reason a
// 403 gives, and that a refused request changed nothing.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startApp, type TestApp } from '../support/app.ts';
import { ACTORS, as, castTeam, count, makeCast, roleOf, type Actor, type Cast } from './fixtures.ts';

interface World {
  teamId: string;
  target: { member: number; admin: number; owner: number };
  invitationId: string;
}

interface Case {
  name: string;
  request: (w: World, actor: Actor) => { method: 'PATCH' | 'DELETE' | 'POST' | 'GET'; url: string; payload?: object };
  expected: Record<Actor, number>;
  /** Words the 403 detail must contain (it says why). */
  reason?: Partial<Record<Actor, RegExp>>;
  /** Reads the state the request would change: must be equal before and after a refusal. */
  state?: (t: TestApp, w: World) => Promise<unknown>;
}

const member = (w: World, id: number) => `/api/v1/teams/${w.teamId}/members/${id}/`;
const CASES: Case[] = [
  {
    name: 'PATCH team (rename)',
    request: (w) => ({ method: 'PATCH', url: `/api/v1/teams/${w.teamId}/`, payload: { name: 'Renamed' } }),
    expected: { owner: 200, admin: 200, member: 403, outsider: 404 },
    reason: { member: /Only owners and admins can change team settings/ },
    state: async (t, w) =>
      (await t.ctx.db.kysely.selectFrom('teams').select('name').where('id', '=', w.teamId).executeTakeFirst())?.name,
  },
  {
    name: 'PATCH member → admin (target is a member)',
    request: (w) => ({ method: 'PATCH', url: member(w, w.target.member), payload: { role: 'admin' } }),
    expected: { owner: 200, admin: 403, member: 403, outsider: 404 },
    reason: { admin: /Admins cannot grant the admin role/, member: /Only owners and admins can change roles/ },
    state: (t, w) => roleOf(t, w.teamId, w.target.member),
  },
  {
    name: 'PATCH member → member (target is a member; a no-op)',
    request: (w) => ({ method: 'PATCH', url: member(w, w.target.member), payload: { role: 'member' } }),
    expected: { owner: 200, admin: 200, member: 403, outsider: 404 },
  },
  {
    name: 'PATCH admin → member',
    request: (w) => ({ method: 'PATCH', url: member(w, w.target.admin), payload: { role: 'member' } }),
    expected: { owner: 200, admin: 403, member: 403, outsider: 404 },
    reason: { admin: /Admins can manage members only; this user is an admin/ },
    state: (t, w) => roleOf(t, w.teamId, w.target.admin),
  },
  {
    name: 'PATCH owner → admin (another owner remains)',
    request: (w) => ({ method: 'PATCH', url: member(w, w.target.owner), payload: { role: 'admin' } }),
    expected: { owner: 200, admin: 403, member: 403, outsider: 404 },
    reason: { admin: /this user is an owner/ },
    state: (t, w) => roleOf(t, w.teamId, w.target.owner),
  },
  {
    name: 'DELETE a member',
    request: (w) => ({ method: 'DELETE', url: member(w, w.target.member) }),
    expected: { owner: 204, admin: 204, member: 403, outsider: 404 },
    reason: { member: /Members can only remove themselves/ },
    state: (t, w) => roleOf(t, w.teamId, w.target.member),
  },
  {
    name: 'DELETE an admin',
    request: (w) => ({ method: 'DELETE', url: member(w, w.target.admin) }),
    expected: { owner: 204, admin: 403, member: 403, outsider: 404 },
    reason: { admin: /Admins can remove members only; this user is an admin/ },
    state: (t, w) => roleOf(t, w.teamId, w.target.admin),
  },
  {
    name: 'DELETE an owner (another owner remains)',
    request: (w) => ({ method: 'DELETE', url: member(w, w.target.owner) }),
    expected: { owner: 204, admin: 403, member: 403, outsider: 404 },
    state: (t, w) => roleOf(t, w.teamId, w.target.owner),
  },
  {
    name: 'DELETE themself (leave)',
    request: (_w, actor) => ({ method: 'DELETE', url: '' + actor }),
    expected: { owner: 204, admin: 204, member: 204, outsider: 404 },
  },
  {
    name: 'POST invitation as member',
    request: (w) => ({
      method: 'POST',
      url: `/api/v1/teams/${w.teamId}/invitations/`,
      payload: { email: 'new-member@example.net', role: 'member' },
    }),
    expected: { owner: 201, admin: 201, member: 403, outsider: 404 },
    reason: { member: /Only owners and admins can send invitations/ },
    state: (t) => count(t, 'invitations'),
  },
  {
    name: 'POST invitation as admin',
    request: (w) => ({
      method: 'POST',
      url: `/api/v1/teams/${w.teamId}/invitations/`,
      payload: { email: 'new-admin@example.net', role: 'admin' },
    }),
    expected: { owner: 201, admin: 403, member: 403, outsider: 404 },
    reason: { admin: /Admins can invite members only/ },
    state: (t) => count(t, 'invitations'),
  },
  {
    name: 'GET invitations',
    request: (w) => ({ method: 'GET', url: `/api/v1/teams/${w.teamId}/invitations/` }),
    expected: { owner: 200, admin: 200, member: 403, outsider: 404 },
    reason: { member: /Only owners and admins can see or manage invitations/ },
  },
  {
    name: 'DELETE invitation',
    request: (w) => ({ method: 'DELETE', url: `/api/v1/teams/${w.teamId}/invitations/${w.invitationId}/` }),
    expected: { owner: 204, admin: 204, member: 403, outsider: 404 },
    state: async (t, w) =>
      (
        await t.ctx.db.kysely
          .selectFrom('invitations')
          .select('status')
          .where('id', '=', w.invitationId)
          .executeTakeFirst()
      )?.status,
  },
];

describe('teams role matrix', () => {
  let t: TestApp;
  let cast: Cast;
  let targets: { member: number; admin: number; owner: number };
  before(async () => {
    t = await startApp();
    cast = await makeCast(t);
    targets = { member: (await t.user()).id, admin: (await t.user()).id, owner: (await t.user()).id };
  });
  after(() => t.close());

  /** A fresh team per cell, so every request meets the same state. */
  async function world(): Promise<World> {
    const teamId = await castTeam(t, cast);
    await t.member(teamId, targets.member, 'member');
    await t.member(teamId, targets.admin, 'admin');
    await t.member(teamId, targets.owner, 'owner');
    const invited = await t.inject({
      method: 'POST',
      url: `/api/v1/teams/${teamId}/invitations/`,
      headers: as(cast.owner),
      payload: { email: `pending-${teamId}@example.net`, role: 'member' },
    });
    assert.equal(invited.statusCode, 201);
    return { teamId, target: targets, invitationId: invited.json().id };
  }

  for (const c of CASES) {
    for (const actor of ACTORS) {
      it(`${c.name} by ${actor} → ${c.expected[actor]}`, async () => {
        const w = await world();
        let request = c.request(w, actor);
        if (request.url === actor) request = { method: 'DELETE', url: member(w, cast[actor].id) };
        const before = await c.state?.(t, w);
        const res = await t.inject({ ...request, headers: as(cast[actor]) });
        assert.equal(res.statusCode, c.expected[actor], res.body);
        if (res.statusCode >= 400) {
          assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
          assert.equal(res.json().status, res.statusCode);
          if (c.state) assert.deepEqual(await c.state(t, w), before, 'a refused request changed nothing');
        }
        if (res.statusCode === 403) assert.match(res.json().detail, c.reason?.[actor] ?? /./);
        if (res.statusCode === 404) assert.equal(res.json().detail, 'Not found.');
        if (res.statusCode === 204) assert.equal(res.body, '');
      });
    }
  }

  it('a successful role change is visible and returns the member', async () => {
    const w = await world();
    const res = await t.inject({
      method: 'PATCH',
      url: member(w, targets.member),
      headers: as(cast.owner),
      payload: { role: 'admin' },
    });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().id, targets.member);
    assert.equal(res.json().role, 'admin');
    assert.equal(await roleOf(t, w.teamId, targets.member), 'admin');
  });

  it('the last owner can be neither demoted nor removed (409), by themself or anyone', async () => {
    const teamId = await castTeam(t, cast);
    for (const request of [
      {
        method: 'PATCH' as const,
        url: `/api/v1/teams/${teamId}/members/${cast.owner.id}/`,
        payload: { role: 'admin' },
      },
      { method: 'DELETE' as const, url: `/api/v1/teams/${teamId}/members/${cast.owner.id}/` },
    ]) {
      const res = await t.inject({ ...request, headers: as(cast.owner) });
      assert.equal(res.statusCode, 409);
      assert.match(res.json().detail, /at least one owner/);
    }
    assert.equal(await roleOf(t, teamId, cast.owner.id), 'owner');
  });

  it('two owners demoting each other at once leave exactly one owner', async () => {
    const teamId = await castTeam(t, cast);
    await t.member(teamId, targets.owner, 'owner');
    const targetsToken = await t.token(targets.owner, ['write:teams']);
    const [a, b] = await Promise.all([
      t.inject({
        method: 'PATCH',
        url: `/api/v1/teams/${teamId}/members/${targets.owner}/`,
        headers: as(cast.owner),
        payload: { role: 'member' },
      }),
      t.inject({
        method: 'PATCH',
        url: `/api/v1/teams/${teamId}/members/${cast.owner.id}/`,
        headers: { authorization: `Bearer ${targetsToken}` },
        payload: { role: 'member' },
      }),
    ]);
    // Whoever goes second is refused: 403 if already demoted to member, else 409 (last owner).
    const statuses = [a.statusCode, b.statusCode].sort();
    assert.equal(statuses[0], 200);
    assert.ok([403, 409].includes(statuses[1]), String(statuses));
    const owners = await t.ctx.db.kysely
      .selectFrom('memberships')
      .select('user_id')
      .where('team_id', '=', teamId)
      .where('role', '=', 'owner')
      .execute();
    assert.equal(owners.length, 1);
  });

  it('an unknown target user is 404; a bad role or user id is 400', async () => {
    const teamId = await castTeam(t, cast);
    const unknown = await t.inject({
      method: 'PATCH',
      url: `/api/v1/teams/${teamId}/members/${cast.outsider.id}/`,
      headers: as(cast.owner),
      payload: { role: 'admin' },
    });
    assert.equal(unknown.statusCode, 404);
    assert.equal(unknown.json().detail, 'That user is not a member of this team.');
    const badRole = await t.inject({
      method: 'PATCH',
      url: `/api/v1/teams/${teamId}/members/${cast.member.id}/`,
      headers: as(cast.owner),
      payload: { role: 'king' },
    });
    assert.equal(badRole.statusCode, 400);
    assert.equal(badRole.json().errors[0].field, 'role');
    for (const badId of ['abc', '0', '99999999999999999999']) {
      const res = await t.inject({
        method: 'DELETE',
        url: `/api/v1/teams/${teamId}/members/${badId}/`,
        headers: as(cast.owner),
      });
      assert.equal(res.statusCode, 400, badId);
    }
    assert.equal(await roleOf(t, teamId, cast.member.id), 'member');
  });

  it('a credential without write:teams is 403 on every mutating endpoint', async () => {
    const teamId = await castTeam(t, cast);
    const readOnly = await t.token(cast.owner.id, ['read:teams']);
    const headers = { authorization: `Bearer ${readOnly}` };
    for (const request of [
      { method: 'POST' as const, url: '/api/v1/teams/', payload: { name: 'X' } },
      { method: 'PATCH' as const, url: `/api/v1/teams/${teamId}/`, payload: { name: 'X' } },
      {
        method: 'PATCH' as const,
        url: `/api/v1/teams/${teamId}/members/${cast.member.id}/`,
        payload: { role: 'admin' },
      },
      { method: 'DELETE' as const, url: `/api/v1/teams/${teamId}/members/${cast.member.id}/` },
      {
        method: 'POST' as const,
        url: `/api/v1/teams/${teamId}/invitations/`,
        payload: { email: 'x@example.net', role: 'member' },
      },
      { method: 'POST' as const, url: '/api/v1/invitations/accept/', payload: { token: 'x' } },
    ]) {
      const res = await t.inject({ ...request, headers });
      assert.equal(res.statusCode, 403, `${request.method} ${request.url}`);
      assert.match(res.json().detail, /write:teams/);
    }
    assert.equal(await roleOf(t, teamId, cast.member.id), 'member');
  });

  it('an inactive team is 404 to its own owner', async () => {
    const teamId = await castTeam(t, cast);
    await t.ctx.db.kysely.updateTable('teams').set({ is_active: 0 }).where('id', '=', teamId).execute();
    const res = await t.inject({
      method: 'PATCH',
      url: `/api/v1/teams/${teamId}/`,
      headers: as(cast.owner),
      payload: { name: 'X' },
    });
    assert.equal(res.statusCode, 404);
  });
});
