// The teams pages in headless Chromium, clicked as people would: the landing page, a first team,
// an invitation accepted by a second person from the e-mail's link, roles changed and members
// removed with the API's refusals shown on the page (admins manage members only, the last owner
// stays), settings, the 403 and 404 pages; and the same forms with JavaScript turned off.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { LAST_OWNER } from '../../src/teams/policy.ts';
import { startOAuthApp, type OAuthTestApp } from '../oauth/helpers.ts';
import { events, roleOf } from '../teams/fixtures.ts';
import {
  NO_CHROMIUM,
  errorOf,
  inspect,
  launch,
  linkFromMail,
  logIn,
  noticeOf,
  person,
  reportScreenshots,
  submit,
} from './browser.ts';

describe('teams pages in Chromium', { skip: NO_CHROMIUM }, () => {
  let t: OAuthTestApp;
  let browser: Browser;
  before(async () => {
    t = await startOAuthApp({ SERVICE_WEBHOOKS_ENABLED: 'true' });
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
    reportScreenshots(import.meta.filename);
  });

  const row = (page: Page, text: string) => page.locator('#members tbody tr', { hasText: text });

  async function setRole(page: Page, email: string, role: string) {
    await row(page, email).getByLabel('Role').selectOption(role);
    return submit(page, row(page, email).getByRole('button', { name: 'Save' }));
  }

  it('two people: a team, an invitation accepted from the e-mail, roles and removals with the refusals, settings', async () => {
    const ada = await t.user({ email: 'ada@example.com', firstName: 'Ada' });
    const bob = await t.user({ email: 'bob@example.com', firstName: 'Bob' });
    const { page } = await person(browser);

    // Logged out, the address the server prints is a landing page.
    await page.goto(`${t.base}/`);
    await page.getByRole('link', { name: 'API documentation' }).waitFor();
    await inspect(page, 'landing');
    await submit(page, page.locator('main').getByRole('link', { name: 'Log in' }));
    await logIn(page, t.base, ada.email);
    await submit(page, page.getByRole('navigation').getByRole('link', { name: 'Dashboard' }));
    assert.match((await page.textContent('main')) ?? '', /You are not in a team yet/);
    await inspect(page, 'dashboard-empty');

    // A first team; the slug is derived from the name.
    await submit(page, page.getByRole('navigation').getByRole('link', { name: 'Teams' }));
    await inspect(page, 'teams-empty');
    await page.getByLabel('Name').fill('Acme Rockets');
    assert.equal(await submit(page, page.getByRole('button', { name: 'Create team' })), 200);
    assert.match(page.url(), /\/teams\/[0-9a-f-]{36}\/$/);
    const teamUrl = page.url();
    const teamId = teamUrl.split('/').at(-2)!;
    assert.equal(await noticeOf(page), 'The team Acme Rockets has been created.');
    assert.match((await page.textContent('main')) ?? '', /Slug acme-rockets/);

    // Ada invites Bob as a member, with a message.
    await page.getByLabel('E-mail').fill(bob.email);
    await page.getByLabel('Role', { exact: true }).last().selectOption('member');
    await page.getByLabel('Message').fill('Welcome aboard, see you at standup');
    await submit(page, page.getByRole('button', { name: 'Send invitation' }));
    assert.equal(await noticeOf(page), `Invitation sent to ${bob.email}.`);
    assert.equal(await page.locator('#invitations tbody tr', { hasText: bob.email }).count(), 1);
    await inspect(page, 'team');
    const created = (await events(t, 'team.invitation.created')).filter((e) => e.team_id === teamId);
    assert.equal(created.length, 1, 'the page emits the event the API emits');

    // Bob opens the link from his e-mail, logs in, accepts.
    const link = await linkFromMail(t, bob.email, t.base, '/invitations/');
    const bobBrowser = await person(browser);
    const bobPage = bobBrowser.page;
    await bobPage.goto(link);
    await inspect(bobPage, 'invitation');
    await submit(bobPage, bobPage.getByRole('link', { name: 'Log in to accept' }));
    await logIn(bobPage, t.base, bob.email);
    assert.equal(bobPage.url(), link);
    await submit(bobPage, bobPage.getByRole('button', { name: /Accept and join/ }));
    assert.match((await bobPage.textContent('main')) ?? '', /You are now a member of Acme Rockets/);
    await submit(bobPage, bobPage.getByRole('link', { name: 'Open Acme Rockets' }));
    assert.equal(bobPage.url(), teamUrl);

    // Bob appears in Ada's list; his invitation is no longer pending.
    await page.reload();
    assert.match((await row(page, bob.email).textContent()) ?? '', /Bob.*bob@example\.com/s);
    assert.equal(await row(page, bob.email).getByLabel('Role').inputValue(), 'member');
    assert.equal(await page.locator('#invitations').count(), 0);

    // Ada makes Bob an admin.
    await setRole(page, bob.email, 'admin');
    assert.equal(await noticeOf(page), `${bob.email} is now an admin.`);
    assert.equal(await roleOf(t, teamId, bob.id), 'admin');

    // Bob, an admin, cannot touch the owner: the page says why, with the API's 403.
    await bobPage.goto(teamUrl);
    assert.equal(await setRole(bobPage, ada.email, 'member'), 403);
    assert.equal(await errorOf(bobPage), 'Admins can manage members only; this user is an owner.');
    assert.equal(await submit(bobPage, row(bobPage, ada.email).getByRole('button', { name: 'Remove' })), 403);
    assert.equal(await errorOf(bobPage), 'Admins can remove members only; this user is an owner.');
    await inspect(bobPage, 'team-refused');
    assert.equal(await roleOf(t, teamId, ada.id), 'owner');

    // The last owner can neither step down nor leave: 409 with the API's sentence.
    assert.equal(await setRole(page, ada.email, 'member'), 409);
    assert.equal(await errorOf(page), LAST_OWNER);
    assert.equal(await submit(page, page.getByRole('button', { name: 'Leave team' })), 409);
    assert.equal(await errorOf(page), LAST_OWNER);
    assert.equal(await roleOf(t, teamId, ada.id), 'owner');

    // An invitation revoked from the page: its link stops working.
    await page.getByLabel('E-mail').fill('carol@example.com');
    await submit(page, page.getByRole('button', { name: 'Send invitation' }));
    const carolLink = await linkFromMail(t, 'carol@example.com', t.base, '/invitations/');
    await submit(
      page,
      page.locator('#invitations tbody tr', { hasText: 'carol@example.com' }).getByRole('button', { name: 'Revoke' }),
    );
    assert.equal(await noticeOf(page), 'The invitation has been revoked; its link no longer works.');
    assert.equal((await bobPage.goto(carolLink))?.status(), 410);

    // Settings: rename and a new slug; a slug another team holds is a 409 on the page.
    await t.team(bob.id, 'Other Team');
    await submit(page, page.getByRole('link', { name: 'Team settings' }));
    await inspect(page, 'team-settings');
    await page.getByLabel('Slug').fill('other-team');
    assert.equal(await submit(page, page.getByRole('button', { name: 'Save' })), 409);
    assert.equal(await errorOf(page), 'The slug "other-team" is already taken.');
    await page.getByLabel('Name').fill('Acme Rocketry');
    await page.getByLabel('Slug').fill('acme-rocketry');
    await submit(page, page.getByRole('button', { name: 'Save' }));
    assert.equal(await noticeOf(page), 'The team settings have been saved.');
    assert.equal(await page.getByLabel('Slug').inputValue(), 'acme-rocketry');

    // Bob back to member: now the owner/admin pages answer him 403 with the reason.
    await page.goto(teamUrl);
    await setRole(page, bob.email, 'member');
    assert.equal((await bobPage.goto(`${teamUrl}settings/`))?.status(), 403);
    assert.match(
      (await bobPage.textContent('main')) ?? '',
      /Only owners and admins can change team settings; you are a member\./,
    );
    await inspect(bobPage, 'forbidden');
    assert.equal((await bobPage.goto(`${teamUrl}webhooks/`))?.status(), 403);
    await bobPage.goto(teamUrl);
    assert.equal(
      await bobPage.getByRole('button', { name: 'Send invitation' }).count(),
      0,
      'a member sees no owner/admin controls',
    );

    // Ada removes Bob; for him the team is gone (404, as for any non-member).
    await submit(page, row(page, bob.email).getByRole('button', { name: 'Remove' }));
    assert.equal(await noticeOf(page), 'The member has been removed from the team.');
    assert.equal(await roleOf(t, teamId, bob.id), undefined);
    assert.equal((await bobPage.goto(teamUrl))?.status(), 404);
    await inspect(bobPage, 'not-found');

    // The dashboard: each of Ada's teams with her role and its member count, and the shortcuts.
    const globex = await t.team(bob.id, 'Globex Research');
    await t.member(globex.id, ada.id, 'admin');
    await page.goto(`${t.base}/`);
    const teams = await page
      .locator('#teams tbody tr')
      .evaluateAll((rows) => rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent)));
    assert.deepEqual(teams, [
      ['Acme Rocketry', 'owner', '1'],
      ['Globex Research', 'admin', '2'],
    ]);
    for (const name of ['Tokens', 'Applications', 'Profile', 'Security'])
      assert.equal(await page.locator('main').getByRole('link', { name }).count(), 1);
    await inspect(page, 'dashboard');
    await submit(page, page.getByRole('navigation').getByRole('link', { name: 'Teams' }));
    await inspect(page, 'teams');
    await t.token(ada.id, ['read:profile', 'read:teams']);
    for (const [name, shot] of [
      ['Tokens', 'tokens'],
      ['Profile', 'profile'],
      ['Security', 'security'],
    ] as const) {
      await submit(page, page.getByRole('navigation').getByRole('link', { name }));
      await inspect(page, shot);
    }
    await bobBrowser.context.close();
  });

  it('without JavaScript: create a team, invite, change a role, leave', async () => {
    const dee = await t.user({ email: 'dee@example.com' });
    const eve = await t.user({ email: 'eve@example.com' });
    const { page, context } = await person(browser, { javaScript: false });
    await page.goto(`${t.base}/teams/`);
    await logIn(page, t.base, dee.email);
    assert.equal(new URL(page.url()).pathname, '/teams/', 'the login comes back to the page asked for');
    await page.getByLabel('Name').fill('No Script Club');
    await page.getByLabel('Slug').fill('no-script');
    await submit(page, page.getByRole('button', { name: 'Create team' }));
    const teamId = page.url().split('/').at(-2)!;
    await t.member(teamId, eve.id, 'member');
    await page.getByLabel('E-mail').fill('frank@example.com');
    await submit(page, page.getByRole('button', { name: 'Send invitation' }));
    assert.equal(await noticeOf(page), 'Invitation sent to frank@example.com.');
    await page.reload();
    await setRole(page, eve.email, 'admin');
    assert.equal(await roleOf(t, teamId, eve.id), 'admin');
    await setRole(page, eve.email, 'owner');
    await submit(page, page.getByRole('button', { name: 'Leave team' }));
    assert.equal(new URL(page.url()).pathname, '/teams/');
    assert.equal(await noticeOf(page), 'You have left No Script Club.');
    assert.equal(await roleOf(t, teamId, dee.id), undefined);
    await context.close();
  });
});
