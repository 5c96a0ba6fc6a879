// Creating and updating teams: owner membership, slugs (derived, explicit, taken, racing), validation.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startApp, type TestApp } from '../support/app.ts';
import { as, castTeam, count, events, makeCast, roleOf, type Cast } from './fixtures.ts';

describe('teams API: create and update', () => {
  let t: TestApp;
  let cast: Cast;
  before(async () => {
    t = await startApp({ SERVICE_WEBHOOKS_ENABLED: 'true' });
    cast = await makeCast(t);
  });
  after(() => t.close());

  it('POST /api/v1/teams/ creates the team with the caller as owner, and emits no event', async () => {
    const eventsBefore = await count(t, 'events');
    const res = await t.inject({
      method: 'POST',
      url: '/api/v1/teams/',
      headers: as(cast.owner),
      payload: { name: '  Café Ops  ' },
    });
    assert.equal(res.statusCode, 201);
    const team = res.json();
    assert.deepEqual(Object.keys(team), ['id', 'name', 'slug', 'role', 'created_at', 'updated_at']);
    assert.equal(team.name, 'Café Ops');
    assert.equal(team.slug, 'cafe-ops');
    assert.equal(team.role, 'owner');
    assert.equal(res.headers.location, `http://testserver/api/v1/teams/${team.id}/`);
    assert.equal(await roleOf(t, team.id, cast.owner.id), 'owner');
    const members = await t.inject({ url: `/api/v1/teams/${team.id}/members/`, headers: as(cast.owner) });
    assert.equal(members.json().count, 1);
    assert.equal(members.json().results[0].role, 'owner');
    assert.equal(await count(t, 'events'), eventsBefore, 'team creation emits nothing');
    // The same name again gets the next free slug.
    const again = await t.inject({
      method: 'POST',
      url: '/api/v1/teams/',
      headers: as(cast.owner),
      payload: { name: 'Cafe Ops' },
    });
    assert.equal(again.json().slug, 'cafe-ops-2');
  });

  it('a taken slug is 409 and creates nothing; two creators racing for one slug: one 201, one 409', async () => {
    const first = await t.inject({
      method: 'POST',
      url: '/api/v1/teams/',
      headers: as(cast.owner),
      payload: { name: 'A', slug: 'taken-slug' },
    });
    assert.equal(first.statusCode, 201);
    const teamsBefore = await t.ctx.db.kysely.selectFrom('teams').select('id').execute();
    const taken = await t.inject({
      method: 'POST',
      url: '/api/v1/teams/',
      headers: as(cast.admin),
      payload: { name: 'B', slug: 'taken-slug' },
    });
    assert.equal(taken.statusCode, 409);
    assert.equal(taken.json().detail, 'The slug "taken-slug" is already taken.');
    assert.equal((await t.ctx.db.kysely.selectFrom('teams').select('id').execute()).length, teamsBefore.length);

    const race = await Promise.all(
      [cast.owner, cast.admin, cast.member].map((actor) =>
        t.inject({
          method: 'POST',
          url: '/api/v1/teams/',
          headers: as(actor),
          payload: { name: 'Race', slug: 'race-slug' },
        }),
      ),
    );
    assert.deepEqual(race.map((r) => r.statusCode).sort(), [201, 409, 409]);
    const rows = await t.ctx.db.kysely.selectFrom('teams').select('id').where('slug', '=', 'race-slug').execute();
    assert.equal(rows.length, 1);
  });

  it('bad bodies are 400 with the field named, and create nothing', async () => {
    const before = await t.ctx.db.kysely.selectFrom('teams').select('id').execute();
    for (const [payload, field] of [
      [{}, 'name'],
      [{ name: '' }, 'name'],
      [{ name: 'x'.repeat(101) }, 'name'],
      [{ name: 'X', slug: 'Not A Slug' }, 'slug'],
      [{ name: 'X', slug: '-edge' }, 'slug'],
      [{ name: 'X', is_active: false }, 'is_active'],
    ] as const) {
      const res = await t.inject({ method: 'POST', url: '/api/v1/teams/', headers: as(cast.owner), payload });
      assert.equal(res.statusCode, 400, JSON.stringify(payload));
      assert.equal(res.json().errors[0].field, field);
    }
    const blank = await t.inject({
      method: 'POST',
      url: '/api/v1/teams/',
      headers: as(cast.owner),
      payload: { name: '   ' },
    });
    assert.equal(blank.statusCode, 400);
    assert.equal((await t.ctx.db.kysely.selectFrom('teams').select('id').execute()).length, before.length);
  });

  it('PATCH renames and re-slugs; a slug held by another team is 409 and changes nothing', async () => {
    const teamId = await castTeam(t, cast);
    const renamed = await t.inject({
      method: 'PATCH',
      url: `/api/v1/teams/${teamId}/`,
      headers: as(cast.admin),
      payload: { name: 'New name', slug: 'new-slug' },
    });
    assert.equal(renamed.statusCode, 200);
    assert.equal(renamed.json().name, 'New name');
    assert.equal(renamed.json().slug, 'new-slug');
    assert.equal(renamed.json().role, 'admin');
    assert.ok(
      renamed.json().updated_at > renamed.json().created_at || renamed.json().updated_at === renamed.json().created_at,
    );
    // Keeping its own slug is fine.
    const same = await t.inject({
      method: 'PATCH',
      url: `/api/v1/teams/${teamId}/`,
      headers: as(cast.owner),
      payload: { slug: 'new-slug' },
    });
    assert.equal(same.statusCode, 200);
    const conflict = await t.inject({
      method: 'PATCH',
      url: `/api/v1/teams/${teamId}/`,
      headers: as(cast.owner),
      payload: { name: 'Other', slug: 'taken-slug' },
    });
    assert.equal(conflict.statusCode, 409);
    const team = await t.inject({ url: `/api/v1/teams/${teamId}/`, headers: as(cast.owner) });
    assert.equal(team.json().name, 'New name');
    assert.equal(team.json().slug, 'new-slug');
    const unknown = await t.inject({
      method: 'PATCH',
      url: `/api/v1/teams/${teamId}/`,
      headers: as(cast.owner),
      payload: { id: 'x' },
    });
    assert.equal(unknown.statusCode, 400);
  });

  it('the OpenAPI document describes every teams operation (operationId, summary, tags, responses) and no page', async () => {
    const doc = (await t.inject({ url: '/api/schema/' })).json();
    const expected: [string, string, string, string[]][] = [
      ['/api/v1/teams/', 'post', 'create_team', ['201', '400', '401', '403', '409']],
      ['/api/v1/teams/{id}/', 'patch', 'update_team', ['200', '400', '403', '404', '409']],
      ['/api/v1/teams/{id}/members/{user_id}/', 'patch', 'set_member_role', ['200', '403', '404', '409']],
      ['/api/v1/teams/{id}/members/{user_id}/', 'delete', 'remove_member', ['204', '403', '404', '409']],
      ['/api/v1/teams/{team_id}/invitations/', 'post', 'create_invitation', ['201', '400', '403', '404', '409']],
      ['/api/v1/teams/{team_id}/invitations/', 'get', 'list_invitations', ['200', '403', '404']],
      ['/api/v1/teams/{team_id}/invitations/{id}/', 'delete', 'revoke_invitation', ['204', '404']],
      ['/api/v1/invitations/accept/', 'post', 'accept_invitation', ['200', '403', '404', '409', '410']],
      ['/api/v1/me/', 'patch', 'update_me', ['200', '400', '401', '403']],
    ];
    for (const [path, method, operationId, statuses] of expected) {
      const operation = doc.paths[path]?.[method];
      assert.ok(operation, `${method} ${path}`);
      assert.equal(operation.operationId, operationId);
      assert.ok(operation.summary);
      assert.ok(operation.tags.length > 0);
      for (const status of statuses) assert.ok(operation.responses[status], `${operationId} documents ${status}`);
      assert.ok(operation.security?.[0]?.oauth2?.length > 0, `${operationId} names its scopes`);
    }
    assert.equal(doc.paths['/invitations/{token}/'], undefined, 'the browser page is not an API operation');
  });
});
