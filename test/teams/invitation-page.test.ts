// The accept page over HTTP (no browser): CSRF is required, concurrent accepts of one link make one
// membership and one event, and the page's states for unverified and signed-out visitors.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PageClient } from '../accounts/page-client.ts';
import { TEST_PASSWORD, bearer, startApp, type TestApp } from '../support/app.ts';
import { as, castTeam, events, makeCast, roleOf, tokenFromMail, type Cast } from './fixtures.ts';

describe('invitation accept page and concurrency', () => {
  let t: TestApp;
  let cast: Cast;
  before(async () => {
    t = await startApp({ SERVICE_WEBHOOKS_ENABLED: 'true' });
    cast = await makeCast(t);
  });
  after(() => t.close());

  async function inviteToken(teamId: string, email: string) {
    const res = await t.inject({
      method: 'POST',
      url: `/api/v1/teams/${teamId}/invitations/`,
      headers: as(cast.owner),
      payload: { email, role: 'member' },
    });
    assert.equal(res.statusCode, 201);
    return tokenFromMail(t, email);
  }

  it('accepting on the page needs the CSRF token', async () => {
    const teamId = await castTeam(t, cast);
    const lea = await t.user({ email: 'lea@example.org' });
    const token = await inviteToken(teamId, lea.email);
    const browser = new PageClient(t);
    await browser.login(lea.email, TEST_PASSWORD);
    const page = await browser.get(`/invitations/${token}/`);
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /id="accept"/);
    const forged = await browser.post(`/invitations/${token}/`, {}, { csrf: 'forged' });
    assert.equal(forged.statusCode, 403);
    const missing = await browser.post(`/invitations/${token}/`, {}, { csrf: false });
    assert.equal(missing.statusCode, 403);
    assert.equal(await roleOf(t, teamId, lea.id), undefined);
    await browser.get(`/invitations/${token}/`);
    const accepted = await browser.post(`/invitations/${token}/`);
    assert.equal(accepted.statusCode, 200);
    assert.equal(await roleOf(t, teamId, lea.id), 'member');
  });

  it('an unverified invitee is asked to confirm first; a signed-out visitor of an existing account gets no sign-up form', async () => {
    const teamId = await castTeam(t, cast);
    const max = await t.user({ email: 'max@example.org', verified: false });
    const token = await inviteToken(teamId, max.email);
    const anonymous = await new PageClient(t).get(`/invitations/${token}/`);
    assert.equal(anonymous.statusCode, 200);
    assert.match(anonymous.body, /Log in to accept/);
    assert.doesNotMatch(anonymous.body, /id="signup"/);
    const browser = new PageClient(t);
    await browser.login(max.email, TEST_PASSWORD);
    const page = await browser.get(`/invitations/${token}/`);
    assert.match(page.body, /Confirm your e-mail address first/);
    assert.doesNotMatch(page.body, /id="accept"/);
    // Posting anyway is refused (403 page) and adds nobody.
    const forced = await browser.post(`/invitations/${token}/`);
    assert.equal(forced.statusCode, 403);
    assert.match(forced.body, /Verify your e-mail address/);
    assert.equal(await roleOf(t, teamId, max.id), undefined);
  });

  it('a sign-up with a weak password is refused on the page and creates no account', async () => {
    const teamId = await castTeam(t, cast);
    const token = await inviteToken(teamId, 'nora@example.org');
    const browser = new PageClient(t);
    await browser.get(`/invitations/${token}/`);
    const res = await browser.post(`/invitations/${token}/signup/`, { password: 'short' });
    assert.equal(res.statusCode, 400);
    const user = await t.ctx.db.kysely
      .selectFrom('users')
      .select('id')
      .where('email', '=', 'nora@example.org')
      .executeTakeFirst();
    assert.equal(user, undefined);
  });

  it('concurrent accepts of one link: one 200, the rest refused; one membership, one event', async () => {
    const teamId = await castTeam(t, cast);
    const olga = await t.user({ email: 'olga@example.org' });
    const tokens = await Promise.all([1, 2, 3, 4].map(() => t.token(olga.id, ['write:teams'])));
    const token = await inviteToken(teamId, olga.email);
    const results = await Promise.all(
      tokens.map((credential) =>
        t.inject({
          method: 'POST',
          url: '/api/v1/invitations/accept/',
          headers: bearer(credential),
          payload: { token },
        }),
      ),
    );
    const statuses = results.map((r) => r.statusCode).sort();
    assert.equal(statuses.filter((s) => s === 200).length, 1, String(statuses));
    for (const status of statuses.filter((s) => s !== 200)) assert.ok([409, 410].includes(status), String(statuses));
    assert.equal(await roleOf(t, teamId, olga.id), 'member');
    const added = (await events(t, 'team.member.added')).filter((e) => e.team_id === teamId);
    assert.equal(added.length, 1);
  });
});
