// PATCH /api/v1/me/: real changes emit one user.profile.updated per active team; no-ops emit
// nothing; unknown, read-only, over-long and link-bearing fields are 400 and change nothing.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bearer, startApp, type TestApp } from '../support/app.ts';

describe('PATCH /api/v1/me/', () => {
  let t: TestApp;
  let user: { id: number; email: string };
  let token: string;
  let teams: { active: string[]; inactive: string };
  before(async () => {
    t = await startApp({ SERVICE_WEBHOOKS_ENABLED: 'true' });
    user = await t.user({ firstName: 'Ada' });
    token = await t.token(user.id, ['read:profile', 'write:profile']);
    const other = await t.user();
    const owned = await t.team(user.id);
    const joined = await t.team(other.id);
    await t.member(joined.id, user.id, 'member');
    const inactive = await t.team(user.id);
    await t.ctx.db.kysely.updateTable('teams').set({ is_active: 0 }).where('id', '=', inactive.id).execute();
    await t.team(other.id); // a team the user is not in
    teams = { active: [owned.id, joined.id].sort(), inactive: inactive.id };
  });
  after(() => t.close());

  const patch = (payload: unknown, credential = token) =>
    t.inject({ method: 'PATCH', url: '/api/v1/me/', headers: bearer(credential), payload: payload as object });
  const profileEvents = async () =>
    (
      await t.ctx.db.kysely
        .selectFrom('events')
        .selectAll()
        .where('type', '=', 'user.profile.updated')
        .orderBy('team_id')
        .execute()
    ).map((row) => ({
      ...row,
      data: JSON.parse(row.data),
    }));
  const userRow = () =>
    t.ctx.db.kysely.selectFrom('users').selectAll().where('id', '=', user.id).executeTakeFirstOrThrow();

  it('a real change returns the profile and emits one event per active team, with the exact data', async () => {
    const res = await patch({ last_name: '  Lovelace ', display_name: 'Ada L.', first_name: 'Ada' });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), {
      id: user.id,
      email: user.email,
      first_name: 'Ada',
      last_name: 'Lovelace',
      display_name: 'Ada L.',
    });
    const row = await userRow();
    assert.equal(row.last_name, 'Lovelace');
    const emitted = await profileEvents();
    assert.deepEqual(
      emitted.map((e) => e.team_id),
      teams.active,
      'one per active team, none for the inactive one',
    );
    for (const event of emitted) {
      assert.match(event.id, /^evt_/);
      assert.deepEqual(event.data, {
        user_id: user.id,
        changed_fields: ['last_name', 'display_name'],
        updated_at: row.updated_at,
      });
    }
    const me = await t.inject({ url: '/api/v1/me/', headers: bearer(token) });
    assert.equal(me.json().display_name, 'Ada L.');
  });

  it('two concurrent updates of different fields both stick (only the fields sent are written)', async () => {
    const [first, last] = await Promise.all([patch({ first_name: 'Grace' }), patch({ last_name: 'Hopper' })]);
    assert.deepEqual([first.statusCode, last.statusCode], [200, 200]);
    const row = await userRow();
    assert.deepEqual([row.first_name, row.last_name], ['Grace', 'Hopper']);
    const restored = await patch({ first_name: 'Ada', last_name: 'Lovelace' });
    assert.deepEqual([restored.json().first_name, restored.json().last_name], ['Ada', 'Lovelace']);
  });

  it('a no-op (same values, or an empty body) emits nothing and keeps updated_at', async () => {
    const before = await userRow();
    const eventsBefore = (await profileEvents()).length;
    for (const payload of [{ first_name: 'Ada', last_name: 'Lovelace' }, { display_name: ' Ada L. ' }, {}]) {
      const res = await patch(payload);
      assert.equal(res.statusCode, 200);
      assert.equal(res.json().last_name, 'Lovelace');
    }
    assert.equal((await profileEvents()).length, eventsBefore);
    assert.equal((await userRow()).updated_at, before.updated_at);
  });

  it('bad fields are 400 naming the field, and change nothing', async () => {
    const before = await userRow();
    const eventsBefore = (await profileEvents()).length;
    const cases: [unknown, string, RegExp][] = [
      [{ email: 'new@example.com' }, 'email', /read-only/],
      [{ id: 99, first_name: 'Eve' }, 'id', /read-only/],
      [{ nickname: 'x' }, 'nickname', /Unknown field/],
      [{ first_name: 'x'.repeat(151) }, 'first_name', /150/],
      [{ display_name: 'Visit https://spam.example' }, 'display_name', /links/],
      [{ display_name: 'cheap-pills.com' }, 'display_name', /links/],
      [{ first_name: 'www.example' }, 'first_name', /links/],
      [{ first_name: 'Ada', last_name: 'Line\nbreak' }, 'last_name', /Control characters/],
    ];
    for (const [payload, field, message] of cases) {
      const res = await patch(payload);
      assert.equal(res.statusCode, 400, JSON.stringify(payload));
      assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
      const error = res.json().errors.find((e: { field: string }) => e.field === field);
      assert.ok(error, `${JSON.stringify(payload)}: ${res.body}`);
      assert.match(error.message, message);
    }
    assert.equal((await patch([{ first_name: 'x' }])).statusCode, 400);
    assert.deepEqual(await userRow(), before);
    assert.equal((await profileEvents()).length, eventsBefore);
  });

  it('a name at the length limit is accepted; an ordinary name with a dot is not a link', async () => {
    const res = await patch({ first_name: 'x'.repeat(150), last_name: 'St. John', display_name: 'J.R.R. Tolkien' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().last_name, 'St. John');
  });

  it('needs write:profile (403) and a credential (401); nothing changes', async () => {
    const before = await userRow();
    const readOnly = await t.token(user.id, ['read:profile']);
    const forbidden = await patch({ first_name: 'Eve' }, readOnly);
    assert.equal(forbidden.statusCode, 403);
    assert.match(forbidden.json().detail, /write:profile/);
    const anonymous = await t.inject({ method: 'PATCH', url: '/api/v1/me/', payload: { first_name: 'Eve' } });
    assert.equal(anonymous.statusCode, 401);
    assert.deepEqual(await userRow(), before);
  });
});

describe('PATCH /api/v1/me/ over real HTTP: concurrent updates of different names all stick', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp({ SERVICE_WEBHOOKS_ENABLED: 'true' });
  });
  after(() => t.close());

  it('three clients change one name each, at once, round after round; every change is kept', async () => {
    const base = await t.listen();
    const user = await t.user({ firstName: 'Start' });
    await t.team(user.id);
    // Three clients of the same user (a script, a CLI, an integration), each with a token of its own.
    const tokens = await Promise.all([0, 1, 2].map(() => t.token(user.id, ['read:profile', 'write:profile'])));
    const send = (token: string, body: Record<string, string>) =>
      fetch(`${base}/api/v1/me/`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    for (let round = 1; round <= 10; round++) {
      const wanted = { first_name: `First ${round}`, last_name: `Last ${round}`, display_name: `Display ${round}` };
      const answers = await Promise.all(
        Object.entries(wanted).map(([field, value], i) => send(tokens[i], { [field]: value })),
      );
      const bodies = await Promise.all(answers.map((res) => res.json()));
      assert.deepEqual(
        answers.map((res) => res.status),
        [200, 200, 200],
        JSON.stringify(bodies),
      );
      // Each answer shows its own change (and whatever the others committed before it).
      Object.entries(wanted).forEach(([field, value], i) => assert.equal(bodies[i][field], value));
      const me = await fetch(`${base}/api/v1/me/`, { headers: { authorization: `Bearer ${tokens[0]}` } });
      assert.deepEqual(await me.json(), { id: user.id, email: user.email, ...wanted }, `round ${round}`);
      const row = await t.ctx.db.kysely
        .selectFrom('users')
        .select(['first_name', 'last_name', 'display_name'])
        .where('id', '=', user.id)
        .executeTakeFirstOrThrow();
      assert.deepEqual({ ...row }, wanted, `round ${round}: stored`);
    }
    // One user.profile.updated per change, each naming only its own field.
    const events = await t.ctx.db.kysely
      .selectFrom('events')
      .select('data')
      .where('type', '=', 'user.profile.updated')
      .execute();
    const changed = events.map((event) => JSON.parse(event.data).changed_fields);
    assert.equal(changed.length, 30);
    assert.ok(
      changed.every((fields: string[]) => fields.length === 1),
      JSON.stringify(changed),
    );
  });
});
