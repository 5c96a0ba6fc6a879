// The audit page in headless Chromium, reached as an owner would: from the team's page, after a
// rename on the settings page; filtered with the form; axe-core, the phone width and screenshots
// (test/dashboard/browser.ts).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { NO_CHROMIUM, inspect, launch, logIn, person, reportScreenshots, submit } from '../dashboard/browser.ts';
import { startOAuthApp, type OAuthTestApp } from '../oauth/helpers.ts';

describe('the audit page in Chromium', { skip: NO_CHROMIUM }, () => {
  let t: OAuthTestApp;
  let browser: Browser;
  before(async () => {
    t = await startOAuthApp();
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
    reportScreenshots(import.meta.filename);
  });

  it('an owner renames the team, then reads and filters its audit log', async () => {
    const ada = await t.user({ email: 'ada.audit@example.com' });
    const bob = await t.user({ email: 'bob.audit@example.com' });
    const team = await t.team(ada.id, 'Audit Rockets');
    await t.member(team.id, bob.id, 'member');
    const { page } = await person(browser);
    await page.goto(`${t.base}/teams/${team.id}/settings/`);
    await logIn(page, t.base, ada.email);
    await page.getByLabel('Name').fill('Audit Rockets and Co');
    assert.equal(await submit(page, page.getByRole('button', { name: 'Save' })), 200);
    await page.goto(`${t.base}/teams/${team.id}/`);
    assert.equal(await submit(page, page.getByRole('link', { name: 'Audit log' })), 200);
    const actions = () =>
      page.locator('#audit-entries tbody tr').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-action')));
    assert.deepEqual(await actions(), ['team.updated', 'team.member.added', 'team.created']);
    assert.match(
      (await page.locator('#audit-entries tbody tr').first().textContent()) ?? '',
      /name: Audit Rockets → Audit Rockets and Co/,
    );
    await inspect(page, 'team-audit');

    await page.getByLabel('Action').selectOption('team.member.added');
    assert.equal(await submit(page, page.getByRole('button', { name: 'Filter' })), 200);
    assert.deepEqual(await actions(), ['team.member.added']);
    assert.match(page.url(), /action=team\.member\.added/);
    await inspect(page, 'team-audit-filtered');
  });
});
