// Device Code flow end to end over real HTTP, with the approval in headless Chromium: DCR of a
// public device client, device authorization, polling (authorization_pending, slow_down), login +
// code + approve on /o/device/, token, the API with it, refresh rotation, refresh reuse (grant
// revoked), revocation; and denial, wrong-code lockout.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import {
  DEVICE_GRANT,
  get,
  launchBrowser,
  logIn,
  postForm,
  register,
  screenshot,
  startOAuthApp,
  type OAuthTestApp,
} from './helpers.ts';

describe('OAuth device flow', () => {
  let t: OAuthTestApp;
  let browser: Browser;
  let user: { id: number; email: string };
  let client: any;

  before(async () => {
    t = await startOAuthApp();
    browser = await launchBrowser();
    user = await t.user({ firstName: 'Dev' });
    client = await register(t.base, {
      client_name: 'Acme CLI',
      grant_types: [DEVICE_GRANT],
      scope: 'read:profile read:teams',
      token_endpoint_auth_method: 'none',
    });
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  const startDevice = async (scope = 'read:profile read:teams') => {
    const res = await postForm(`${t.base}/o/device-authorization/`, { client_id: client.client_id, scope });
    assert.equal(res.status, 200, res.text);
    return res.body;
  };
  const poll = (deviceCode: string) =>
    postForm(`${t.base}/o/token/`, { grant_type: DEVICE_GRANT, device_code: deviceCode, client_id: client.client_id });

  it('registers the SPEC body as written: 201, public client, no secret', () => {
    assert.equal(typeof client.client_id, 'string');
    assert.ok(Number.isInteger(client.client_id_issued_at));
    assert.equal(client.client_name, 'Acme CLI');
    assert.deepEqual(client.grant_types.sort(), [DEVICE_GRANT, 'refresh_token'].sort());
    assert.equal(client.scope, 'read:profile read:teams');
    assert.equal(client.token_endpoint_auth_method, 'none');
    assert.deepEqual(client.response_types, []);
    assert.equal(client.client_secret, undefined);
  });

  it('device authorization answers with the RFC 8628 fields', async () => {
    const res = await postForm(`${t.base}/o/device-authorization/`, {
      client_id: client.client_id,
      scope: 'read:profile',
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
    assert.ok(res.headers.get('x-ratelimit-limit'));
    const body = res.body;
    assert.match(body.user_code, /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    assert.equal(body.verification_uri, `${t.base}/o/device/`);
    assert.equal(body.verification_uri_complete, `${t.base}/o/device/?user_code=${encodeURIComponent(body.user_code)}`);
    assert.equal(body.expires_in, 600);
    assert.equal(body.interval, 5);
    assert.equal(typeof body.device_code, 'string');
  });

  it('a request without scope asks for the scopes the client registered', async () => {
    const res = await postForm(`${t.base}/o/device-authorization/`, { client_id: client.client_id });
    assert.equal(res.status, 200);
    const row = await t.ctx.db.kysely
      .selectFrom('oauth_models')
      .select('payload')
      .where('model', '=', 'DeviceCode')
      .where('id', '=', res.body.device_code)
      .executeTakeFirstOrThrow();
    assert.equal(JSON.parse(row.payload).params.scope, 'read:profile read:teams');
  });

  it('offline_access is accepted and dropped (refresh tokens come anyway)', async () => {
    const res = await postForm(`${t.base}/o/device-authorization/`, {
      client_id: client.client_id,
      scope: 'offline_access read:profile',
    });
    assert.equal(res.status, 200, res.text);
    const row = await t.ctx.db.kysely
      .selectFrom('oauth_models')
      .select('payload')
      .where('model', '=', 'DeviceCode')
      .where('id', '=', res.body.device_code)
      .executeTakeFirstOrThrow();
    assert.equal(JSON.parse(row.payload).params.scope, 'read:profile');
  });

  it('refuses an unknown scope and the reserved admin scope; a scope beyond the registered ones is asked for', async () => {
    const unknown = await postForm(`${t.base}/o/device-authorization/`, {
      client_id: client.client_id,
      scope: 'read:profile rule:world',
    });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.error, 'invalid_scope');
    const reserved = await postForm(`${t.base}/o/device-authorization/`, {
      client_id: client.client_id,
      scope: 'read:profile admin',
    });
    assert.equal(reserved.status, 400);
    assert.equal(reserved.body.error, 'invalid_scope');
    // The registered scope is no ceiling: the person sees write:teams on the confirmation page and decides.
    const beyond = await postForm(`${t.base}/o/device-authorization/`, {
      client_id: client.client_id,
      scope: 'read:profile write:teams',
    });
    assert.equal(beyond.status, 200);
    const row = await t.ctx.db.kysely
      .selectFrom('oauth_models')
      .select('payload')
      .where('model', '=', 'DeviceCode')
      .where('id', '=', beyond.body.device_code)
      .executeTakeFirstOrThrow();
    assert.equal(JSON.parse(row.payload).params.scope, 'read:profile write:teams');
  });

  it('polling: authorization_pending, then slow_down when too fast', async () => {
    const started = await startDevice();
    const first = await poll(started.device_code);
    assert.equal(first.status, 400);
    assert.equal(first.body.error, 'authorization_pending');
    const second = await poll(started.device_code);
    assert.equal(second.status, 400);
    assert.equal(second.body.error, 'slow_down');
  });

  const approve = async (page: import('playwright-core').Page, userCode: string, shots = false) => {
    await page.fill('#user_code', userCode.toLowerCase().replace('-', ''));
    await Promise.all([page.waitForLoadState('load'), page.click('#continue')]);
    assert.equal(await page.locator('.client-name').textContent(), 'Acme CLI');
    const scopes = await page.locator('.scopes li').allTextContents();
    assert.deepEqual(scopes, [t.ctx.scopes.describe('read:profile'), t.ctx.scopes.describe('read:teams')]);
    if (shots) await screenshot(page, 'device-3-confirm');
    await Promise.all([page.waitForURL(/\/o\/device\/[A-Za-z0-9_-]+$/), page.click('#approve')]);
    assert.match((await page.locator('main').textContent()) ?? '', /Acme CLI is connected/);
    if (shots) await screenshot(page, 'device-4-done');
  };

  it('approval in Chromium, token, API call, refresh rotation, reuse revokes the grant; revocation', async () => {
    const started = await startDevice();
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${t.base}/o/device/`);
    assert.match(page.url(), /\/accounts\/login\/\?next=%2Fo%2Fdevice%2F/);
    await screenshot(page, 'device-1-login');
    await logIn(page, user.email);
    assert.equal(new URL(page.url()).pathname, '/o/device/');
    await screenshot(page, 'device-2-enter-code');
    await approve(page, started.user_code, true);

    const token = await poll(started.device_code);
    assert.equal(token.status, 200, token.text);
    assert.equal(token.body.token_type, 'Bearer');
    assert.equal(token.body.expires_in, 3600);
    assert.equal(token.body.scope, 'read:profile read:teams');
    assert.equal(typeof token.body.refresh_token, 'string');
    assert.equal(token.body.id_token, undefined);
    assert.match(token.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);

    const me = await get(`${t.base}/api/v1/me/`, { authorization: `Bearer ${token.body.access_token}` });
    assert.equal(me.status, 200);
    assert.equal(me.body.email, user.email);

    const refreshed = await postForm(`${t.base}/o/token/`, {
      grant_type: 'refresh_token',
      refresh_token: token.body.refresh_token,
      client_id: client.client_id,
    });
    assert.equal(refreshed.status, 200, refreshed.text);
    assert.notEqual(refreshed.body.refresh_token, token.body.refresh_token);
    assert.notEqual(refreshed.body.access_token, token.body.access_token);
    const meAgain = await get(`${t.base}/api/v1/me/`, { authorization: `Bearer ${refreshed.body.access_token}` });
    assert.equal(meAgain.status, 200);

    // Reuse of the spent refresh token revokes the whole grant: the newest tokens stop working too.
    const reuse = await postForm(`${t.base}/o/token/`, {
      grant_type: 'refresh_token',
      refresh_token: token.body.refresh_token,
      client_id: client.client_id,
    });
    assert.equal(reuse.status, 400);
    assert.equal(reuse.body.error, 'invalid_grant');
    const afterReuse = await get(`${t.base}/api/v1/me/`, { authorization: `Bearer ${refreshed.body.access_token}` });
    assert.equal(afterReuse.status, 401);
    assert.match(
      afterReuse.headers.get('www-authenticate') ?? '',
      /resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource"/,
    );
    const newest = await postForm(`${t.base}/o/token/`, {
      grant_type: 'refresh_token',
      refresh_token: refreshed.body.refresh_token,
      client_id: client.client_id,
    });
    assert.equal(newest.status, 400);
    assert.equal(newest.body.error, 'invalid_grant');

    // The device code is single use: presenting it again is invalid_grant.
    await new Promise((resolve) => setTimeout(resolve, 5100));
    const again = await poll(started.device_code);
    assert.equal(again.status, 400);
    assert.equal(again.body.error, 'invalid_grant');

    // RFC 7009: a second authorization, then the client revokes its access token: the next API
    // call is 401, and the authorization's refresh token is revoked with it.
    const second = await startDevice();
    await page.goto(`${t.base}/o/device/?user_code=${encodeURIComponent(second.user_code)}`);
    await page.waitForSelector('#approve');
    await Promise.all([page.waitForURL(/\/o\/device\/[A-Za-z0-9_-]+$/), page.click('#approve')]);
    const tokens = await poll(second.device_code);
    assert.equal(tokens.status, 200, tokens.text);
    const revoked = await postForm(`${t.base}/o/revoke/`, {
      token: tokens.body.access_token,
      token_type_hint: 'access_token',
      client_id: client.client_id,
    });
    assert.equal(revoked.status, 200);
    assert.match(revoked.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
    const afterRevoke = await get(`${t.base}/api/v1/me/`, { authorization: `Bearer ${tokens.body.access_token}` });
    assert.equal(afterRevoke.status, 401);
    const refreshAfterRevoke = await postForm(`${t.base}/o/token/`, {
      grant_type: 'refresh_token',
      refresh_token: tokens.body.refresh_token,
      client_id: client.client_id,
    });
    assert.equal(refreshAfterRevoke.body.error, 'invalid_grant');
    await context.close();
  });
  it('deny on the confirmation page: the device gets access_denied', async () => {
    const started = await startDevice();
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(started.verification_uri_complete);
    await logIn(page, user.email);
    await page.waitForSelector('#deny');
    await Promise.all([page.waitForLoadState('load'), page.click('#deny')]);
    assert.match((await page.locator('main').textContent()) ?? '', /not connected/);
    await context.close();
    const res = await poll(started.device_code);
    assert.equal(res.status, 400);
    assert.equal(res.body.error, 'access_denied');
  });

  // Last: it locks the test address out of code entry for 15 minutes.
  it('wrong user codes: 10 per 15 minutes, then refused without looking at the code', async () => {
    const started = await startDevice();
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${t.base}/o/device/`);
    await logIn(page, user.email);
    for (let i = 0; i < 10; i++) {
      await page.fill('#user_code', 'BBBB-BBBB');
      await Promise.all([page.waitForLoadState('load'), page.click('#continue')]);
      assert.match((await page.locator('.error').textContent()) ?? '', /not valid/, `attempt ${i + 1}`);
    }
    const failures = await t.ctx.db.kysely
      .selectFrom('oauth_user_code_failures')
      .selectAll()
      .where('user_id', '=', user.id)
      .execute();
    assert.equal(failures.length, 10);
    // The eleventh attempt, even with the right code, is refused.
    await page.fill('#user_code', started.user_code);
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST'),
      page.click('#continue'),
    ]);
    assert.equal(response.status(), 429);
    assert.match((await page.locator('main').textContent()) ?? '', /Too many wrong codes/);
    await screenshot(page, 'device-5-locked');
    await context.close();
    const res = await poll(started.device_code);
    assert.equal(res.body.error, 'authorization_pending');
  });
});
