// The dashboard's forms are doors too: each change made there records one audit entry naming the
// user and their browser session, as the API's do; a form the service refuses records nothing.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startApp, type TestApp } from '../support/app.ts';
import { makeCast, type Cast } from '../teams/fixtures.ts';
import { auditReader, pageDoor, type Entry } from './helpers.ts';
import type { PageClient } from '../accounts/page-client.ts';

const HOOK = 'https://127.0.0.1:9/hook';

describe('audit entries of changes made on the dashboard', () => {
  let t: TestApp;
  let cast: Cast;
  let fresh: (teamId: string, reader: { token: string }) => Promise<Entry[]>;

  before(async () => {
    t = await startApp({ SERVICE_WEBHOOKS_ENABLED: 'true', SERVICE_WEBHOOKS_ALLOWED_CIDRS: '127.0.0.1/32' });
    cast = await makeCast(t);
    fresh = auditReader(t);
  });
  after(() => t?.close());

  /** Posts a form from the page it is on (for its CSRF token); expects the success redirect. */
  const post = async (
    browser: PageClient,
    from: string,
    url: string,
    fields: Record<string, string | string[]> = {},
    status = 303,
  ) => {
    await browser.get(from);
    const res = await browser.post(url, fields);
    assert.equal(res.statusCode, status, `${url}: ${res.body.slice(0, 300)}`);
    return res;
  };

  it('team, members, invitations and webhooks changed on the pages: one entry each, by the session', async () => {
    const { owner, admin } = cast;
    const { browser, credential } = await pageDoor(t, owner);
    const { browser: adminBrowser, credential: adminCredential } = await pageDoor(t, admin);
    const created = await post(browser, '/teams/', '/teams/', { name: 'Dashboard team' });
    const teamId = String(created.headers.location).split('/')[2];
    const team = `/teams/${teamId}/`;
    await t.member(teamId, admin.id, 'admin');
    const [teamCreated] = await fresh(teamId, owner); // and the fixture's join
    assert.deepEqual(
      [teamCreated.action, teamCreated.actor, teamCreated.credential],
      ['team.created', { type: 'user', id: owner.id, email: owner.email }, credential],
    );

    await post(browser, `${team}settings/`, `${team}settings/`, { name: 'Dashboard team 2', slug: 'dashboard-team-2' });
    await post(browser, team, `${team}invitations/`, { email: 'new@example.org', role: 'member', message: '' });
    const invitationId = (
      await t.ctx.db.kysely
        .selectFrom('invitations')
        .select('id')
        .where('team_id', '=', teamId)
        .executeTakeFirstOrThrow()
    ).id;
    await post(browser, team, `${team}invitations/${invitationId}/revoke/`);
    await post(browser, team, `${team}members/${admin.id}/role/`, { role: 'member' });
    await post(browser, team, `${team}members/${admin.id}/role/`, { role: 'owner' }, 303);
    await post(adminBrowser, team, `${team}leave/`);
    await post(browser, team, `${team}members/${owner.id}/role/`, { role: 'admin' }, 409); // the last owner

    await post(browser, `${team}webhooks/`, `${team}webhooks/`, { url: HOOK, events: ['team.member.added'] });
    const subscriptionId = (
      await t.ctx.db.kysely
        .selectFrom('webhook_subscriptions')
        .select('id')
        .where('team_id', '=', teamId)
        .executeTakeFirstOrThrow()
    ).id;
    const hook = `${team}webhooks/${subscriptionId}/`;
    await post(browser, hook, hook, { url: HOOK, events: ['*'] });
    await post(browser, hook, `${hook}disable/`);
    await post(browser, hook, `${hook}enable/`);
    await post(browser, hook, `${hook}rotate-secret/`);
    await post(browser, hook, `${hook}delete/`);

    const entries = await fresh(teamId, owner);
    for (const entry of entries) {
      const context = entry.context as { ip: string; user_agent: string; request_id: string };
      assert.deepEqual([context.ip, context.user_agent], ['127.0.0.1', 'lightMyRequest']);
      assert.match(context.request_id, /^[0-9a-f-]{36}$/);
    }
    assert.equal(
      new Set(entries.map((entry) => (entry.context as { request_id: string }).request_id)).size,
      entries.length,
      'each entry carries the request id of its own post',
    );
    const ownerActor = { type: 'user', id: owner.id, email: owner.email };
    const adminActor = { type: 'user', id: admin.id, email: admin.email };
    const sub = { type: 'webhook_subscription', id: subscriptionId };
    assert.deepEqual(
      entries.map((entry) => [entry.action, entry.actor, entry.credential, entry.target]),
      [
        ['team.updated', ownerActor, credential, { type: 'team', id: teamId }],
        ['team.invitation.created', ownerActor, credential, { type: 'invitation', id: invitationId }],
        ['team.invitation.revoked', ownerActor, credential, { type: 'invitation', id: invitationId }],
        ['team.member.role_changed', ownerActor, credential, { type: 'user', id: String(admin.id) }],
        ['team.member.role_changed', ownerActor, credential, { type: 'user', id: String(admin.id) }],
        ['team.member.left', adminActor, adminCredential, { type: 'user', id: String(admin.id) }],
        ['webhook.subscription.created', ownerActor, credential, sub],
        ['webhook.subscription.updated', ownerActor, credential, sub],
        ['webhook.subscription.updated', ownerActor, credential, sub],
        ['webhook.subscription.updated', ownerActor, credential, sub],
        ['webhook.secret_rotated', ownerActor, credential, sub],
        ['webhook.subscription.deleted', ownerActor, credential, sub],
      ],
    );
    assert.deepEqual(
      entries.slice(7, 10).map((entry) => entry.data),
      [
        { events: { before: ['team.member.added'], after: ['*'] } },
        { is_active: { before: true, after: false } },
        { is_active: { before: false, after: true } },
      ],
    );
  });
});
