// The accept link in headless Chromium: the e-mail's link → log in (or sign up) → back → one click →
// membership and team.member.added; revoked and used links show an error page and add nobody.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../support/browser.ts';
import { TEST_PASSWORD, startApp, type TestApp } from '../support/app.ts';
import { as, castTeam, events, makeCast, roleOf, tokenFromMail, type Cast } from './fixtures.ts';

describe('invitation page in Chromium', () => {
  let t: TestApp;
  let cast: Cast;
  let base: string;
  let browser: Browser;
  before(async () => {
    t = await startApp({ SERVICE_WEBHOOKS_ENABLED: 'true' });
    cast = await makeCast(t);
    base = await t.listen();
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await t.close();
  });

  /** Invites `email` and returns the link from the e-mail, pointed at the listening server. */
  async function invitationLink(
    teamId: string,
    email: string,
    role = 'member',
  ): Promise<{ link: string; token: string; id: string }> {
    const res = await t.inject({
      method: 'POST',
      url: `/api/v1/teams/${teamId}/invitations/`,
      headers: as(cast.owner),
      payload: { email, role },
    });
    assert.equal(res.statusCode, 201, res.body);
    const token = await tokenFromMail(t, email);
    return { link: `${base}/invitations/${token}/`, token, id: res.json().id };
  }

  async function withPage(run: (page: Page) => Promise<void>) {
    const context = await browser.newContext();
    try {
      await run(await context.newPage());
    } finally {
      await context.close();
    }
  }

  async function logIn(page: Page, email: string) {
    await page.fill('#email', email);
    await page.fill('#password', TEST_PASSWORD);
    await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]);
  }

  it('an existing user logs in from the link, comes back, and accepts with one click', async () => {
    const teamId = await castTeam(t, cast);
    const hana = await t.user({ email: 'hana@example.org' });
    const { link } = await invitationLink(teamId, hana.email, 'admin');
    await withPage(async (page) => {
      await page.goto(link);
      assert.match((await page.textContent('main')) ?? '', /invited hana@example\.org to join as an admin/);
      assert.equal(await page.locator('#signup').count(), 0, 'no sign-up form: the address has an account');
      await Promise.all([page.waitForNavigation(), page.click('#login')]);
      assert.match(page.url(), /\/accounts\/login\/\?next=%2Finvitations%2F/);
      await logIn(page, hana.email);
      assert.equal(page.url(), link, 'back on the invitation page after login');
      assert.equal(await roleOf(t, teamId, hana.id), undefined, 'nothing happens before the click');
      const [response] = await Promise.all([page.waitForNavigation(), page.click('#accept')]);
      assert.equal(response?.status(), 200);
      assert.match((await page.textContent('main')) ?? '', /You are now an admin of/);
    });
    assert.equal(await roleOf(t, teamId, hana.id), 'admin');
    const added = (await events(t, 'team.member.added')).filter((e) => e.team_id === teamId);
    assert.deepEqual(
      added.map((e) => e.data),
      [{ user_id: hana.id, email: 'hana@example.org', role: 'admin' }],
    );
    // The link is single-use: opening it again shows a 410 page.
    await withPage(async (page) => {
      const response = await page.goto(link);
      assert.equal(response?.status(), 410);
      assert.match((await page.textContent('main')) ?? '', /already been used/);
    });
  });

  it('a new person signs up on the page (address verified by the link) and accepts', async () => {
    const teamId = await castTeam(t, cast);
    const { link } = await invitationLink(teamId, 'ivan@example.org');
    await withPage(async (page) => {
      await page.goto(link);
      await page.fill('#password', 'a fresh and long passphrase 42');
      await Promise.all([page.waitForNavigation(), page.click('#signup')]);
      assert.equal(page.url(), link);
      await Promise.all([page.waitForNavigation(), page.click('#accept')]);
      assert.match((await page.textContent('main')) ?? '', /You are now a member of/);
    });
    const ivan = await t.ctx.db.kysely
      .selectFrom('users')
      .selectAll()
      .where('email', '=', 'ivan@example.org')
      .executeTakeFirstOrThrow();
    assert.ok(ivan.email_verified_at, 'the invitation link proved the address');
    assert.equal(await roleOf(t, teamId, ivan.id), 'member');
  });

  it('logged in as someone else: switch account, log in as the invitee, accept', async () => {
    const teamId = await castTeam(t, cast);
    const jun = await t.user({ email: 'jun@example.org' });
    const { link } = await invitationLink(teamId, jun.email);
    await withPage(async (page) => {
      await page.goto(`${base}/accounts/login/`);
      await logIn(page, cast.outsider.email);
      await page.goto(link);
      assert.match((await page.textContent('main')) ?? '', /this invitation is for jun@example\.org/);
      assert.equal(await page.locator('#accept').count(), 0);
      await Promise.all([page.waitForNavigation(), page.click('#switch')]);
      await logIn(page, jun.email);
      assert.equal(page.url(), link);
      await Promise.all([page.waitForNavigation(), page.click('#accept')]);
    });
    assert.equal(await roleOf(t, teamId, jun.id), 'member');
    assert.equal(await roleOf(t, teamId, cast.outsider.id), undefined);
  });

  it('a revoked link and a garbage link show error pages; nobody joins', async () => {
    const teamId = await castTeam(t, cast);
    const kim = await t.user({ email: 'kim@example.org' });
    const { link, id } = await invitationLink(teamId, kim.email);
    const revoked = await t.inject({
      method: 'DELETE',
      url: `/api/v1/teams/${teamId}/invitations/${id}/`,
      headers: as(cast.owner),
    });
    assert.equal(revoked.statusCode, 204);
    await withPage(async (page) => {
      const response = await page.goto(link);
      assert.equal(response?.status(), 410);
      assert.match((await page.textContent('main')) ?? '', /revoked/);
      const garbage = await page.goto(`${base}/invitations/not-a-token/`);
      assert.equal(garbage?.status(), 404);
      assert.match((await page.textContent('main')) ?? '', /not valid/);
    });
    assert.equal(await roleOf(t, teamId, kim.id), undefined);
  });
});
