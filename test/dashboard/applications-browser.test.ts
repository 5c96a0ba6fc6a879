// /accounts/applications/ in headless Chromium: an application authorized through the consent page
// (Authorization Code + PKCE, a client registered by DCR, its redirect URI a local server) is
// listed with its scopes and times; "Revoke access" ends its grant, and every access and refresh
// token of that grant answers 401 / invalid_grant at once, while another person's grant to the same
// application keeps working; the next authorization asks for consent again.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import {
  basic,
  callbackServer,
  get,
  pkce,
  postForm,
  register,
  startOAuthApp,
  type Callback,
  type OAuthTestApp,
} from '../oauth/helpers.ts';
import { NO_CHROMIUM, inspect, launch, logIn, noticeOf, person, reportScreenshots, submit } from './browser.ts';

describe('authorized applications page in Chromium', { skip: NO_CHROMIUM }, () => {
  let t: OAuthTestApp;
  let browser: Browser;
  let callback: Callback;
  let client: { client_id: string; client_secret: string };
  before(async () => {
    t = await startOAuthApp();
    browser = await launch();
    callback = await callbackServer();
    client = await register(t.base, {
      client_name: 'Acme Web',
      client_uri: 'https://acme.example/',
      grant_types: ['authorization_code', 'refresh_token'],
      redirect_uris: [callback.url],
      scope: 'read:profile read:teams',
      token_endpoint_auth_method: 'client_secret_basic',
    });
  });
  after(async () => {
    await browser?.close();
    await callback?.close();
    await t?.close();
    reportScreenshots(import.meta.filename);
  });

  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  const tokenRequest = (form: Record<string, string>) =>
    postForm(`${t.base}/o/token/`, form, basic(client.client_id, client.client_secret));

  /** Authorizes the client in `page` (logging in and approving when asked) and returns its tokens. */
  async function authorize(page: Page, email: string, options: { inspectConsent?: boolean } = {}) {
    const { verifier, challenge } = pkce();
    const before = callback.received.length;
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: callback.url,
      scope: 'read:profile read:teams',
      state: 's',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    await page.goto(`${t.base}/o/authorize/?${query}`);
    if (new URL(page.url()).pathname === '/accounts/login/') await logIn(page, t.base, email);
    let consented = false;
    if (!page.url().startsWith(callback.url)) {
      await page.getByRole('button', { name: 'Approve' }).waitFor();
      if (options.inspectConsent) await inspect(page, 'consent');
      await Promise.all([
        page.waitForURL((url) => url.href.startsWith(callback.url)),
        page.getByRole('button', { name: 'Approve' }).click(),
      ]);
      consented = true;
    }
    assert.equal(callback.received.length, before + 1);
    const code = callback.received.at(-1)!.searchParams.get('code')!;
    const token = await tokenRequest({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: callback.url,
    });
    assert.equal(token.status, 200, token.text);
    return { access: token.body.access_token as string, refresh: token.body.refresh_token as string, consented };
  }

  it('listed after consent; "Revoke access" stops every token of the grant at once, and only those', async () => {
    const ada = await t.user({ email: 'ada@example.com' });
    const bob = await t.user({ email: 'bob@example.com' });
    const { page, context } = await person(browser);
    const first = await authorize(page, ada.email, { inspectConsent: true });
    assert.equal(first.consented, true);
    // A refresh rotates the refresh token and issues a second access token under the same grant.
    const refreshed = await tokenRequest({ grant_type: 'refresh_token', refresh_token: first.refresh });
    assert.equal(refreshed.status, 200, refreshed.text);
    const tokens = [first.access, refreshed.body.access_token as string];
    for (const token of tokens) assert.equal((await get(`${t.base}/api/v1/me/`, bearer(token))).status, 200);
    // Bob authorizes the same application in his own browser.
    const bobBrowser = await person(browser);
    const bobTokens = await authorize(bobBrowser.page, bob.email);

    await page.goto(`${t.base}/`);
    await submit(page, page.getByRole('navigation').getByRole('link', { name: 'Applications' }));
    const row = page.locator('#applications tbody tr', { hasText: 'Acme Web' });
    const cells = (await row.locator('td').allInnerTexts()).map((text) => text.replace(/\s+/g, ' ').trim());
    assert.match(cells[0], /^Acme Web https:\/\/acme\.example\/$/);
    assert.match(cells[1], /read:profile .*read:teams /);
    assert.match(cells[2], /^\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC$/);
    assert.match(cells[3], /^\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC$/);
    await inspect(page, 'applications');

    await submit(page, row.getByRole('button', { name: 'Revoke access' }));
    assert.equal(await noticeOf(page), 'Access revoked: the application can no longer act for you.');
    assert.match((await page.textContent('main')) ?? '', /You have not authorized any application\./);
    await inspect(page, 'applications-empty');
    // At once: both access tokens are refused, and the refresh token is dead.
    for (const token of tokens) {
      const me = await get(`${t.base}/api/v1/me/`, bearer(token));
      assert.equal(me.status, 401, me.text);
    }
    const again = await tokenRequest({ grant_type: 'refresh_token', refresh_token: refreshed.body.refresh_token });
    assert.equal(again.status, 400);
    assert.equal(again.body.error, 'invalid_grant');
    // Bob's grant to the same application is his own and still works.
    assert.equal((await get(`${t.base}/api/v1/me/`, bearer(bobTokens.access))).status, 200);
    // The next authorization asks Ada for her consent again.
    assert.equal((await authorize(page, ada.email)).consented, true);
    await bobBrowser.context.close();
    await context.close();
  });

  it('without JavaScript; a second tab revoking what the first revoked gets the 404 page', async () => {
    const cy = await t.user({ email: 'cy@example.com' });
    const { page, context } = await person(browser, { javaScript: false });
    const { access } = await authorize(page, cy.email);
    const otherTab = await context.newPage();
    await otherTab.goto(`${t.base}/accounts/applications/`);
    await page.goto(`${t.base}/accounts/applications/`);
    await submit(
      page,
      page.locator('#applications tbody tr', { hasText: 'Acme Web' }).getByRole('button', { name: 'Revoke access' }),
    );
    assert.equal((await get(`${t.base}/api/v1/me/`, bearer(access))).status, 401);
    assert.equal(await submit(otherTab, otherTab.getByRole('button', { name: 'Revoke access' })), 404);
    assert.match((await otherTab.textContent('main')) ?? '', /You have not authorized an application with that id\./);
    await context.close();
  });
});
