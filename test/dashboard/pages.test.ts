// The dashboard pages over HTTP (Fastify inject, a cookie jar, the real app and database): every
// form post is CSRF-checked and changes nothing without its token; logged out, pages send to the
// login; a non-member gets the 404 page and a member the 403 page that says why; bad input is a 4xx
// page that changes nothing; limits and refusals are the API's; webhooks off means no webhook pages.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { AddressGuard } from '../../src/webhooks/ssrf.ts';
import { createSubscription } from '../../src/webhooks/subscriptions.ts';
import { PageClient } from '../accounts/page-client.ts';
import { FIXTURE_ACTOR, TEST_PASSWORD, startApp, type TestApp } from '../support/app.ts';
import { castTeam, count, events, makeCast, roleOf, type Cast } from '../teams/fixtures.ts';

const HOOK = 'https://127.0.0.1:9/hook';

describe('dashboard pages over HTTP', () => {
  let t: TestApp;
  let cast: Cast;
  const clients = {} as Record<keyof Cast, PageClient>;
  before(async () => {
    t = await startApp({
      SERVICE_WEBHOOKS_ENABLED: 'true',
      SERVICE_WEBHOOKS_ALLOWED_CIDRS: '127.0.0.1/32',
      SERVICE_WEBHOOKS_MAX_SUBSCRIPTIONS_PER_TEAM: '2',
    });
    cast = await makeCast(t);
    for (const actor of ['owner', 'admin', 'member', 'outsider'] as const) {
      clients[actor] = new PageClient(t);
      await clients[actor].login(cast[actor].email, TEST_PASSWORD);
    }
  });
  after(() => t.close());

  /** A fresh team of the cast with one webhook (one success in its log) and one pending invitation. */
  async function world() {
    const teamId = await castTeam(t, cast);
    const { row } = await createSubscription(
      t.ctx,
      new AddressGuard(t.ctx.config.webhooks),
      teamId,
      { url: HOOK, events: ['*'] },
      FIXTURE_ACTOR,
    );
    const now = new Date().toISOString();
    const log = await t.ctx.db.kysely
      .insertInto('webhook_deliveries')
      .values({
        subscription_id: row.id,
        event_id: 'evt_x',
        event_type: 'team.member.added',
        payload: '{}',
        attempt: 1,
        status: 'success',
        next_retry_at: null,
        created_at: now,
        status_code: 200,
        duration_ms: 5,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const invited = await clients.owner
      .get(`/teams/${teamId}/`)
      .then(() =>
        clients.owner.post(`/teams/${teamId}/invitations/`, { email: 'pending@example.com', role: 'member' }),
      );
    assert.equal(invited.statusCode, 303, invited.body);
    const invitation = await t.ctx.db.kysely
      .selectFrom('invitations')
      .select('id')
      .where('team_id', '=', teamId)
      .executeTakeFirstOrThrow();
    const team = `/teams/${teamId}/`;
    const hook = `${team}webhooks/${row.id}/`;
    return { teamId, team, hook, subscription: row, logId: Number(log.id), invitationId: invitation.id };
  }

  /** Every table a dashboard form writes, as one comparable value. */
  async function snapshot() {
    const tables = [
      'teams',
      'memberships',
      'invitations',
      'webhook_subscriptions',
      'webhook_deliveries',
      'oauth_consents',
      'events',
      'mail_outbox',
    ];
    const rows: Record<string, unknown> = {};
    for (const table of tables)
      rows[table] = (await sql.raw(`select * from ${table} order by 1`).execute(t.ctx.db.kysely)).rows;
    return JSON.stringify(rows);
  }

  function posts(w: Awaited<ReturnType<typeof world>>): [string, Record<string, string | string[]>][] {
    return [
      ['/teams/', { name: 'Another' }],
      [`${w.team}settings/`, { name: 'Renamed', slug: 'renamed' }],
      [`${w.team}members/${cast.member.id}/role/`, { role: 'admin' }],
      [`${w.team}members/${cast.member.id}/remove/`, {}],
      [`${w.team}leave/`, {}],
      [`${w.team}invitations/`, { email: 'new@example.com', role: 'member' }],
      [`${w.team}invitations/${w.invitationId}/revoke/`, {}],
      [`${w.team}webhooks/`, { url: HOOK, events: ['*'] }],
      [w.hook, { url: `${HOOK}2`, events: ['team.member.added'] }],
      [`${w.hook}disable/`, {}],
      [`${w.hook}rotate-secret/`, {}],
      [`${w.hook}test/`, {}],
      [`${w.hook}deliveries/${w.logId}/retry/`, {}],
      [`${w.hook}delete/`, {}],
      ['/accounts/applications/revoke/', { client_id: 'some-client' }],
    ];
  }

  it('every form post without its CSRF token, or with a wrong one, is the 403 page and changes nothing', async () => {
    const w = await world();
    const before = await snapshot();
    for (const [url, fields] of posts(w)) {
      for (const csrf of [false, 'not-the-token'] as const) {
        const res = await clients.owner.post(url, fields, { csrf });
        assert.equal(res.statusCode, 403, `${url}: ${res.body.slice(0, 200)}`);
        assert.match(res.headers['content-type'] as string, /^text\/html/);
        assert.match(res.body, /CSRF token missing or invalid/);
      }
    }
    assert.equal(await snapshot(), before);
  });

  it('logged out: / is the landing page; every other page sends to the login, a post changes nothing', async () => {
    const w = await world();
    const visitor = new PageClient(t);
    const landing = await visitor.get('/');
    assert.equal(landing.statusCode, 200);
    assert.match(landing.body, /href="\/accounts\/login\/">Log in</);
    assert.match(landing.body, /href="\/accounts\/signup\/">Sign up</);
    assert.match(landing.body, /href="\/api\/docs\/"/);
    for (const path of [
      '/teams/',
      w.team,
      `${w.team}settings/`,
      `${w.team}webhooks/`,
      w.hook,
      '/accounts/applications/',
    ]) {
      const res = await visitor.get(path);
      assert.equal(res.statusCode, 303, path);
      assert.equal(res.headers.location, `/accounts/login/?next=${encodeURIComponent(path)}`);
    }
    const before = await snapshot();
    // The visitor's own token is valid for its own (anonymous) page: the login still comes first.
    for (const [url, fields] of posts(w)) {
      const res = await visitor.post(url, fields);
      assert.equal(res.statusCode, 303, url);
      assert.equal(res.headers.location, '/accounts/login/?next=%2F');
    }
    assert.equal(await snapshot(), before);
  });

  it('a non-member gets the 404 page on every team page and form, as for a team that does not exist', async () => {
    const w = await world();
    const outsider = clients.outsider;
    const before = await snapshot();
    for (const path of [
      w.team,
      `${w.team}settings/`,
      `${w.team}webhooks/`,
      w.hook,
      '/teams/not-a-uuid/',
      '/teams/00000000-0000-4000-8000-000000000000/',
    ]) {
      const res = await outsider.get(path);
      assert.equal(res.statusCode, 404, path);
      assert.match(res.body, /No team of yours has this address\./);
    }
    await outsider.get('/teams/');
    for (const [url, fields] of posts(w).filter(([url]) => url.startsWith(w.team))) {
      const res = await outsider.post(url, fields);
      assert.equal(res.statusCode, 404, url);
    }
    assert.equal(await snapshot(), before);
  });

  it('a member gets a 403 page that says why, and nothing changes', async () => {
    const w = await world();
    const member = clients.member;
    const before = await snapshot();
    const refusals: [string, 'GET' | 'POST', Record<string, string | string[]>, RegExp][] = [
      [`${w.team}settings/`, 'GET', {}, /Only owners and admins can change team settings; you are a member\./],
      [
        `${w.team}settings/`,
        'POST',
        { name: 'Mine', slug: 'mine' },
        /Only owners and admins can change team settings; you are a member\./,
      ],
      [`${w.team}webhooks/`, 'GET', {}, /Only owners and admins of the team can manage its webhooks\./],
      [w.hook, 'GET', {}, /Only owners and admins of the team can manage its webhooks\./],
      [`${w.hook}test/`, 'POST', {}, /Only owners and admins of the team can manage its webhooks\./],
      [
        `${w.team}invitations/`,
        'POST',
        { email: 'x@example.com', role: 'member' },
        /Only owners and admins can send invitations; you are a member\./,
      ],
      [
        `${w.team}invitations/${w.invitationId}/revoke/`,
        'POST',
        {},
        /Only owners and admins can see or manage invitations; you are a member\./,
      ],
      [
        `${w.team}members/${cast.admin.id}/role/`,
        'POST',
        { role: 'member' },
        /Only owners and admins can change roles; you are a member\./,
      ],
      [
        `${w.team}members/${cast.admin.id}/remove/`,
        'POST',
        {},
        /Members can only remove themselves; ask an owner or admin\./,
      ],
    ];
    for (const [url, method, fields, text] of refusals) {
      if (method === 'POST') await member.get(w.team);
      const res = method === 'GET' ? await member.get(url) : await member.post(url, fields);
      assert.equal(res.statusCode, 403, `${method} ${url}`);
      assert.match(res.body, text, `${method} ${url}`);
    }
    assert.equal(await snapshot(), before);
    // The team page itself shows a member no owner/admin controls.
    const page = await member.get(w.team);
    assert.doesNotMatch(page.body, /Send invitation|\/settings\/"|\/webhooks\/"|Remove</);
    assert.match(page.body, />Leave team</);
  });

  it('an admin: members only, no admin invitations; the last owner stays; each a message with the API status', async () => {
    const w = await world();
    const admin = clients.admin;
    await admin.get(w.team);
    const cases: [string, Record<string, string>, number, RegExp][] = [
      [
        `${w.team}members/${cast.owner.id}/role/`,
        { role: 'member' },
        403,
        /Admins can manage members only; this user is an owner\./,
      ],
      [
        `${w.team}members/${cast.member.id}/role/`,
        { role: 'admin' },
        403,
        /Admins cannot grant the admin role; ask an owner\./,
      ],
      [`${w.team}members/${cast.owner.id}/remove/`, {}, 403, /Admins can remove members only; this user is an owner\./],
      [
        `${w.team}invitations/`,
        { email: 'boss@example.com', role: 'admin' },
        403,
        /Admins can invite members only; ask an owner to invite an admin\./,
      ],
    ];
    for (const [url, fields, status, text] of cases) {
      const res = await admin.post(url, fields);
      assert.equal(res.statusCode, status, url);
      assert.match(res.body, text);
      assert.match(res.body, /<h2>Members \(3\)<\/h2>/, 'shown on the team page');
    }
    const owner = clients.owner;
    await owner.get(w.team);
    for (const [url, fields] of [
      [`${w.team}members/${cast.owner.id}/role/`, { role: 'admin' }],
      [`${w.team}leave/`, {}],
      [`${w.team}members/${cast.owner.id}/remove/`, {}],
    ] as const) {
      const res = await owner.post(url, fields);
      assert.equal(res.statusCode, 409, url);
      assert.match(res.body, /A team must keep at least one owner: make another member an owner first\./);
    }
    assert.equal(await roleOf(t, w.teamId, cast.owner.id), 'owner');
    assert.equal(await roleOf(t, w.teamId, cast.member.id), 'member');
  });

  it('bad input is a 4xx page with the reason, and changes nothing', async () => {
    const w = await world();
    const owner = clients.owner;
    await owner.get(w.team);
    const second = await createSubscription(
      t.ctx,
      new AddressGuard(t.ctx.config.webhooks),
      w.teamId,
      { url: `${HOOK}/2`, events: ['*'] },
      FIXTURE_ACTOR,
    );
    assert.ok(second.row.id);
    const before = await snapshot();
    const cases: [string, Record<string, string | string[]>, number, RegExp][] = [
      ['/teams/', { name: '' }, 400, /A team name is 1 to 100 characters\./],
      ['/teams/', { name: 'x'.repeat(101) }, 400, /A team name is 1 to 100 characters\./],
      ['/teams/', { name: 'Fine', slug: 'Not A Slug' }, 400, /A slug is 1 to 50 lowercase letters/],
      [`${w.team}settings/`, { name: 'Fine', slug: '-bad-' }, 400, /A slug is 1 to 50 lowercase letters/],
      [`${w.team}invitations/`, { email: 'not-an-address', role: 'member' }, 400, /Not a valid e-mail address\./],
      [
        `${w.team}invitations/`,
        { email: 'a@example.com', role: 'owner' },
        400,
        /The owner role cannot be given by invitation/,
      ],
      [`${w.team}invitations/`, { email: 'a@example.com', role: 'king' }, 400, /Choose a role: member or admin\./],
      [
        `${w.team}invitations/`,
        { email: 'a@example.com', role: 'member', message: 'Claim your prize at evil.example.com' },
        400,
        /Links are not allowed in the message\./,
      ],
      [
        `${w.team}invitations/`,
        { email: cast.member.email, role: 'member' },
        409,
        /is already a member of this team\./,
      ],
      [
        `${w.team}invitations/${w.invitationId.replace(/.$/, (last) => (last === 'f' ? 'e' : 'f'))}/revoke/`,
        {},
        404,
        /No pending invitation has that id\./,
      ],
      [`${w.team}members/${cast.member.id}/role/`, { role: 'king' }, 400, /Choose a role: owner, admin or member\./],
      [
        `${w.team}members/${cast.outsider.id}/role/`,
        { role: 'admin' },
        404,
        /That user is not a member of this team\./,
      ],
      [`${w.team}webhooks/`, { url: 'http://hooks.example.com/', events: ['*'] }, 400, /url is refused/],
      [`${w.team}webhooks/`, { url: HOOK }, 400, /Choose at least one event type, or all events\./],
      [w.hook, { url: HOOK, events: ['no.such.event'] }, 400, /Unknown event type: no\.such\.event\./],
      [`${w.team}webhooks/`, { url: HOOK, events: ['*'] }, 409, /A team can have at most 2 webhook subscriptions\./],
      [
        `${w.hook}test/`,
        { event_type: 'no.such.event' },
        400,
        /This subscription does not receive &quot;no\.such\.event&quot;\./,
      ],
      [
        `${w.hook}deliveries/${w.logId}/retry/`,
        {},
        409,
        /Only a failed or dead_letter entry can be retried; this one is success\./,
      ],
      [`${w.hook}deliveries/abc/retry/`, {}, 404, /No entry of this delivery log has that id\./],
      [`${w.hook}deliveries/999999/retry/`, {}, 404, /No entry of this delivery log has that id\./],
      [
        '/accounts/applications/revoke/',
        { client_id: 'never-authorized' },
        404,
        /You have not authorized an application with that id\./,
      ],
    ];
    for (const [url, fields, status, text] of cases) {
      const res = await owner.post(url, fields);
      assert.equal(res.statusCode, status, `${url} ${JSON.stringify(fields)}: ${res.body.slice(0, 300)}`);
      assert.match(res.body, text, url);
    }
    for (const query of ['?status=bogus', '?cursor=forged.cursor']) {
      const res = await owner.get(`${w.hook}${query}`);
      assert.equal(res.statusCode, 400, query);
    }
    assert.equal(await snapshot(), before);
  });

  it('a page-sent invitation is the API one: its event, its e-mail; a new one replaces the pending one', async () => {
    const w = await world();
    const owner = clients.owner;
    const mails = await count(t, 'mail_outbox');
    await owner.get(w.team);
    const res = await owner.post(`${w.team}invitations/`, {
      email: 'Pending@Example.com',
      role: 'admin',
      message: 'Welcome!',
    });
    assert.equal(res.statusCode, 303);
    const rows = await t.ctx.db.kysely
      .selectFrom('invitations')
      .select(['email', 'role', 'status', 'message'])
      .where('team_id', '=', w.teamId)
      .orderBy('created_at')
      .execute();
    assert.deepEqual(
      rows.map((row) => ({ ...row })),
      [
        { email: 'pending@example.com', role: 'member', status: 'replaced', message: null },
        { email: 'pending@example.com', role: 'admin', status: 'pending', message: 'Welcome!' },
      ],
    );
    assert.equal(await count(t, 'mail_outbox'), mails + 1);
    const created = (await events(t, 'team.invitation.created')).filter((e) => e.team_id === w.teamId);
    assert.deepEqual(
      created.map((e) => e.data.role),
      ['member', 'admin'],
    );
    const page = await owner.follow(res);
    assert.match(page.body, /Invitation sent to pending@example\.com\./);
  });

  it('with webhooks off there are no webhook pages, and the team page does not link to them', async () => {
    const off = await startApp();
    try {
      const owner = await off.user();
      const team = await off.team(owner.id);
      const client = new PageClient(off);
      await client.login(owner.email, TEST_PASSWORD);
      const page = await client.get(`/teams/${team.id}/`);
      assert.equal(page.statusCode, 200);
      assert.doesNotMatch(page.body, /webhooks\//);
      const res = await client.get(`/teams/${team.id}/webhooks/`);
      assert.equal(res.statusCode, 404);
      assert.match(res.body, /Webhooks are not enabled on this service\./);
    } finally {
      await off.close();
    }
  });
});
