// Authorization Code + PKCE with a confidential client registered by DCR, driven in headless
// Chromium through the accounts login (with TOTP) and the consent page; the client's redirect URI
// is a real local HTTP server. Then every refusal: wrong verifier, plain method, changed redirect
// URI, reused code (revokes what it issued), expired code, a registered scope that is no ceiling, denied consent; and
// the tokens on the API: missing scope 403, deactivated user 401.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Secret, TOTP } from 'otpauth';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { beginEnrolment, confirmEnrolment, pendingEnrolment } from '../../src/accounts/totp.ts';
import { setUserActive } from '../../src/accounts/users.ts';
import { storageId } from '../../src/oauth/adapter.ts';
import {
  basic,
  callbackServer,
  get,
  launchBrowser,
  logIn,
  pkce,
  postForm,
  register,
  screenshot,
  startOAuthApp,
  type Callback,
  type OAuthTestApp,
} from './helpers.ts';

describe('OAuth authorization code + PKCE', () => {
  let t: OAuthTestApp;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let callback: Callback;
  let client: any;
  let user: { id: number; email: string };
  let totpSecret: string;

  const authorizeUrl = (params: Record<string, string>) =>
    `${t.base}/o/authorize/?${new URLSearchParams({
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: callback.url,
      scope: 'read:profile',
      state: 'st-123',
      ...params,
    })}`;

  /**
   * Runs an authorization in the logged-in browser and returns the callback query. Approves the
   * consent page when it is shown (after a reused code revoked the grant, consent is asked again).
   */
  async function authorize(params: Record<string, string>): Promise<URL> {
    const before = callback.received.length;
    await page.goto(authorizeUrl(params));
    if (!page.url().startsWith(callback.url)) {
      await page.waitForSelector('#approve');
      await Promise.all([page.waitForURL((url) => url.href.startsWith(callback.url)), page.click('#approve')]);
    }
    assert.equal(callback.received.length, before + 1);
    return callback.received.at(-1)!;
  }

  const exchange = (code: string, verifier: string, redirectUri = callback.url) =>
    postForm(
      `${t.base}/o/token/`,
      { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirectUri },
      basic(client.client_id, client.client_secret),
    );

  before(async () => {
    t = await startOAuthApp();
    browser = await launchBrowser();
    context = await browser.newContext();
    page = await context.newPage();
    callback = await callbackServer();
    user = await t.user({ firstName: 'Ada' });
    // TOTP enrolled: the login needs the second step.
    await beginEnrolment(t.ctx, user.id);
    totpSecret = (await pendingEnrolment(t.ctx, user.id, user.email))!.secret;
    const enrolCode = new TOTP({ secret: Secret.fromBase32(totpSecret) }).generate({ timestamp: Date.now() - 30_000 });
    assert.ok(await confirmEnrolment(t.ctx, user.id, enrolCode));
    client = await register(t.base, {
      client_name: 'Acme Web',
      grant_types: ['authorization_code'],
      redirect_uris: [callback.url],
      scope: 'read:profile read:teams',
      token_endpoint_auth_method: 'client_secret_basic',
    });
  });
  after(async () => {
    await browser?.close();
    await callback?.close();
    await t?.close();
  });

  it('DCR gives a confidential client its real secret', () => {
    assert.equal(typeof client.client_secret, 'string');
    assert.ok(client.client_secret.length >= 40);
    assert.ok(!client.client_secret.startsWith('sha256:'));
    assert.equal(client.client_secret_expires_at, 0);
    assert.deepEqual(client.redirect_uris, [callback.url]);
    assert.deepEqual(client.response_types, ['code']);
  });

  it('login with TOTP, consent naming client and scopes, code, token, API', async () => {
    const { verifier, challenge } = pkce();
    await page.goto(
      authorizeUrl({ scope: 'read:profile read:teams', code_challenge: challenge, code_challenge_method: 'S256' }),
    );
    assert.equal(new URL(page.url()).pathname, '/accounts/login/');
    await screenshot(page, 'authorize-1-login');
    await logIn(page, user.email);
    assert.equal(new URL(page.url()).pathname, '/accounts/login/totp/');
    const code = new TOTP({ secret: Secret.fromBase32(totpSecret) }).generate({ timestamp: Date.now() + 30_000 });
    await page.fill('#code', code);
    await Promise.all([
      page.waitForURL(/\/o\/interaction\/[A-Za-z0-9_-]+\/$/),
      page.click('form[action="/accounts/login/totp/"] button[type=submit]'),
    ]);
    await page.waitForSelector('#approve');
    assert.equal(await page.locator('.client-name').textContent(), 'Acme Web');
    assert.deepEqual(await page.locator('.scopes li').allTextContents(), [
      t.ctx.scopes.describe('read:profile'),
      t.ctx.scopes.describe('read:teams'),
    ]);
    await screenshot(page, 'authorize-2-consent');
    await Promise.all([page.waitForURL((url) => url.href.startsWith(callback.url)), page.click('#approve')]);
    const back = callback.received.at(-1)!;
    assert.equal(back.searchParams.get('state'), 'st-123');
    assert.equal(back.searchParams.get('iss'), t.base);
    const authCode = back.searchParams.get('code')!;
    assert.ok(authCode);

    const token = await exchange(authCode, verifier);
    assert.equal(token.status, 200, token.text);
    assert.equal(token.body.scope, 'read:profile read:teams');
    assert.equal(token.body.expires_in, 3600);
    assert.equal(typeof token.body.refresh_token, 'string');
    const me = await get(`${t.base}/api/v1/me/`, { authorization: `Bearer ${token.body.access_token}` });
    assert.equal(me.status, 200);
    assert.equal(me.body.id, user.id);
    const teams = await get(`${t.base}/api/v1/teams/`, { authorization: `Bearer ${token.body.access_token}` });
    assert.equal(teams.status, 200);
  });

  it('consent already given is not asked again', async () => {
    const { challenge } = pkce();
    const before = callback.received.length;
    // Straight back to the client: no login (same session) and no consent page.
    await page.goto(
      authorizeUrl({ scope: 'read:profile read:teams', code_challenge: challenge, code_challenge_method: 'S256' }),
    );
    assert.ok(page.url().startsWith(callback.url), page.url());
    assert.equal(callback.received.length, before + 1);
    assert.ok(callback.received.at(-1)!.searchParams.get('code'));
  });

  it('in a new browser session: log in again, the remembered consent is not asked again', async () => {
    const person = await t.user();
    const run = async (consent: boolean) => {
      const fresh = await browser.newContext();
      const tab = await fresh.newPage();
      const before = callback.received.length;
      await tab.goto(
        authorizeUrl({
          scope: 'read:profile',
          state: 'again',
          code_challenge: pkce().challenge,
          code_challenge_method: 'S256',
        }),
      );
      assert.equal(new URL(tab.url()).pathname, '/accounts/login/');
      if (consent) {
        await logIn(tab, person.email);
        await Promise.all([tab.waitForURL((url) => url.href.startsWith(callback.url)), tab.click('#approve')]);
      } else {
        // Login's redirect chain goes straight on to the client.
        await Promise.all([tab.waitForURL((url) => url.href.startsWith(callback.url)), logIn(tab, person.email)]);
      }
      assert.equal(callback.received.length, before + 1);
      assert.equal(callback.received.at(-1)!.searchParams.get('state'), 'again');
      assert.ok(callback.received.at(-1)!.searchParams.get('code'));
      await fresh.close();
    };
    await run(true);
    await run(false);
  });

  it('a wrong verifier is refused', async () => {
    const { challenge } = pkce();
    const back = await authorize({ code_challenge: challenge, code_challenge_method: 'S256' });
    const res = await exchange(back.searchParams.get('code')!, pkce().verifier);
    assert.equal(res.status, 400);
    assert.equal(res.body.error, 'invalid_grant');
  });

  it('the plain method and a missing challenge are refused', async () => {
    const plain = await authorize({ code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' });
    assert.equal(plain.searchParams.get('error'), 'invalid_request');
    assert.equal(plain.searchParams.get('code'), null);
    const none = await authorize({});
    assert.equal(none.searchParams.get('error'), 'invalid_request');
  });

  it('a changed redirect URI is refused at the token endpoint, and never redirected to at authorize', async () => {
    const { verifier, challenge } = pkce();
    const back = await authorize({ code_challenge: challenge, code_challenge_method: 'S256' });
    const res = await exchange(back.searchParams.get('code')!, verifier, `${callback.url}/other`);
    assert.equal(res.status, 400);
    assert.equal(res.body.error, 'invalid_grant');
    const unregistered = await get(
      authorizeUrl({ redirect_uri: `${callback.url}/other`, code_challenge: challenge, code_challenge_method: 'S256' }),
    );
    assert.equal(unregistered.status, 400);
    assert.equal(unregistered.headers.get('location'), null);
  });

  it('a reused code is refused and revokes the tokens issued from it', async () => {
    const { verifier, challenge } = pkce();
    const back = await authorize({ code_challenge: challenge, code_challenge_method: 'S256' });
    const code = back.searchParams.get('code')!;
    const first = await exchange(code, verifier);
    assert.equal(first.status, 200);
    const second = await exchange(code, verifier);
    assert.equal(second.status, 400);
    assert.equal(second.body.error, 'invalid_grant');
    const me = await get(`${t.base}/api/v1/me/`, { authorization: `Bearer ${first.body.access_token}` });
    assert.equal(me.status, 401);
  });

  it('two concurrent exchanges of one code: exactly one wins', async () => {
    const { verifier, challenge } = pkce();
    const back = await authorize({ code_challenge: challenge, code_challenge_method: 'S256' });
    const code = back.searchParams.get('code')!;
    const results = await Promise.all([exchange(code, verifier), exchange(code, verifier)]);
    assert.deepEqual(results.map((r) => r.status).sort(), [200, 400]);
  });

  it('an expired code is refused (codes live 60 seconds)', async () => {
    const { verifier, challenge } = pkce();
    const back = await authorize({ code_challenge: challenge, code_challenge_method: 'S256' });
    const code = back.searchParams.get('code')!;
    // Stored under its digest, without the code itself.
    assert.equal(
      await t.ctx.db.kysely.selectFrom('oauth_models').select('id').where('id', '=', code).executeTakeFirst(),
      undefined,
    );
    const row = await t.ctx.db.kysely
      .selectFrom('oauth_models')
      .select('payload')
      .where('model', '=', 'AuthorizationCode')
      .where('id', '=', storageId('AuthorizationCode', code))
      .executeTakeFirstOrThrow();
    assert.ok(!row.payload.includes(code));
    const payload = JSON.parse(row.payload);
    assert.equal(payload.exp - payload.iat, 60);
    // Sixty-one seconds later, as far as the code is concerned.
    payload.exp = Math.floor(Date.now() / 1000) - 1;
    payload.iat = payload.exp - 60;
    await t.ctx.db.kysely
      .updateTable('oauth_models')
      .set({ payload: JSON.stringify(payload) })
      .where('model', '=', 'AuthorizationCode')
      .where('id', '=', storageId('AuthorizationCode', code))
      .execute();
    const res = await exchange(code, verifier);
    assert.equal(res.status, 400);
    assert.equal(res.body.error, 'invalid_grant');
  });

  it('the registered scope is no ceiling (more is asked for on the consent page); admin, unknown scopes and a wider refresh are refused', async () => {
    const { verifier, challenge } = pkce();
    const reserved = await authorize({
      scope: 'read:profile admin',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    assert.equal(reserved.searchParams.get('error'), 'invalid_scope');
    const unknown = await authorize({
      scope: 'read:profile launch:missiles',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    assert.equal(unknown.searchParams.get('error'), 'invalid_scope');

    // Registered with read:profile read:teams; write:teams is asked for, consented to, and granted.
    const beyond = pkce();
    await page.goto(
      authorizeUrl({
        scope: 'read:profile write:teams',
        code_challenge: beyond.challenge,
        code_challenge_method: 'S256',
      }),
    );
    await page.waitForSelector('#approve');
    assert.deepEqual(await page.locator('.scopes li').allTextContents(), [
      t.ctx.scopes.describe('read:profile'),
      t.ctx.scopes.describe('write:teams'),
    ]);
    await Promise.all([page.waitForURL((url) => url.href.startsWith(callback.url)), page.click('#approve')]);
    const granted = await exchange(callback.received.at(-1)!.searchParams.get('code')!, beyond.verifier);
    assert.equal(granted.status, 200);
    assert.equal(granted.body.scope, 'read:profile write:teams');

    const back = await authorize({ scope: 'read:profile', code_challenge: challenge, code_challenge_method: 'S256' });
    const token = await exchange(back.searchParams.get('code')!, verifier);
    assert.equal(token.status, 200);
    assert.equal(token.body.scope, 'read:profile');
    const wider = await postForm(
      `${t.base}/o/token/`,
      { grant_type: 'refresh_token', refresh_token: token.body.refresh_token, scope: 'read:profile read:teams' },
      basic(client.client_id, client.client_secret),
    );
    assert.equal(wider.status, 400);
    assert.equal(wider.body.error, 'invalid_scope');

    // The token lacks read:teams: 403 on the API, read:profile still works.
    const teams = await get(`${t.base}/api/v1/teams/`, { authorization: `Bearer ${token.body.access_token}` });
    assert.equal(teams.status, 403);
    const me = await get(`${t.base}/api/v1/me/`, { authorization: `Bearer ${token.body.access_token}` });
    assert.equal(me.status, 200);
  });

  it('introspection: for the authenticated client that owns the token', async () => {
    const { verifier, challenge } = pkce();
    const back = await authorize({ code_challenge: challenge, code_challenge_method: 'S256' });
    const token = await exchange(back.searchParams.get('code')!, verifier);
    const res = await postForm(
      `${t.base}/o/introspect/`,
      { token: token.body.access_token },
      basic(client.client_id, client.client_secret),
    );
    assert.equal(res.status, 200);
    assert.equal(res.body.active, true);
    assert.equal(res.body.sub, String(user.id));
    assert.equal(res.body.scope, 'read:profile');
    assert.equal(res.body.client_id, client.client_id);
    const wrongSecret = await postForm(
      `${t.base}/o/introspect/`,
      { token: token.body.access_token },
      basic(client.client_id, 'not-the-secret'),
    );
    assert.equal(wrongSecret.status, 401);
    assert.equal(wrongSecret.body.error, 'invalid_client');
  });

  it('denied consent sends access_denied back to the client', async () => {
    const other = await register(t.base, {
      client_name: 'Other App',
      grant_types: ['authorization_code'],
      redirect_uris: [callback.url],
      scope: 'read:profile',
    });
    const { challenge } = pkce();
    await page.goto(
      `${t.base}/o/authorize/?${new URLSearchParams({ response_type: 'code', client_id: other.client_id, redirect_uri: callback.url, scope: 'read:profile', state: 'deny-1', code_challenge: challenge, code_challenge_method: 'S256' })}`,
    );
    await page.waitForSelector('#deny');
    assert.equal(await page.locator('.client-name').textContent(), 'Other App');
    await Promise.all([page.waitForURL((url) => url.href.startsWith(callback.url)), page.click('#deny')]);
    const back = callback.received.at(-1)!;
    assert.equal(back.searchParams.get('error'), 'access_denied');
    assert.equal(back.searchParams.get('state'), 'deny-1');
    assert.equal(back.searchParams.get('code'), null);
  });

  it("a deactivated user's token is 401", async () => {
    const { verifier, challenge } = pkce();
    const back = await authorize({ code_challenge: challenge, code_challenge_method: 'S256' });
    const token = await exchange(back.searchParams.get('code')!, verifier);
    assert.equal(
      (await get(`${t.base}/api/v1/me/`, { authorization: `Bearer ${token.body.access_token}` })).status,
      200,
    );
    await setUserActive(t.ctx.db.kysely, user.email, false);
    const me = await get(`${t.base}/api/v1/me/`, { authorization: `Bearer ${token.body.access_token}` });
    assert.equal(me.status, 401);
    const refresh = await postForm(
      `${t.base}/o/token/`,
      { grant_type: 'refresh_token', refresh_token: token.body.refresh_token },
      basic(client.client_id, client.client_secret),
    );
    assert.equal(refresh.status, 400);
    assert.equal(refresh.body.error, 'invalid_grant');
    await setUserActive(t.ctx.db.kysely, user.email, true);
  });
  it('after logging out of the service, an authorization asks to log in again', async () => {
    await page.goto(`${t.base}/accounts/profile/`);
    await Promise.all([
      page.waitForLoadState('load'),
      page.click('form[action="/accounts/logout/"] button[type=submit]'),
    ]);
    const before = callback.received.length;
    await page.goto(authorizeUrl({ code_challenge: pkce().challenge, code_challenge_method: 'S256' }));
    assert.equal(new URL(page.url()).pathname, '/accounts/login/');
    assert.equal(callback.received.length, before);
  });
});
