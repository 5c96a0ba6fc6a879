import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bearer, startApp, TEST_PASSWORD, type TestApp } from '../support/app.ts';
import { PageClient } from './page-client.ts';

describe('session authentication on the API', () => {
  let t: TestApp;
  let c: PageClient;
  let user: { id: number; email: string };
  before(async () => {
    t = await startApp();
    user = await t.user({ firstName: 'Sess' });
    c = new PageClient(t);
    await c.login(user.email, TEST_PASSWORD);
    await c.get('/accounts/profile/');
  });
  after(() => t.close());

  it("a GET with the session cookie has the user's full access", async () => {
    const res = await t.inject({ url: '/api/v1/me/', headers: { cookie: c.cookieHeader('/api/v1/me/') } });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().id, user.id);
  });

  it('an unsafe method needs X-CSRF-Token: 403 without it or with a wrong one, nothing changed', async () => {
    for (const headers of [{}, { 'x-csrf-token': 'forged' }]) {
      const res = await t.inject({
        method: 'PATCH',
        url: '/api/v1/me/',
        headers: { cookie: c.cookieHeader('/'), ...headers },
        payload: { first_name: 'Changed' },
      });
      assert.equal(res.statusCode, 403);
      assert.match(res.json().detail, /X-CSRF-Token/);
    }
    const row = await t.ctx.db.kysely
      .selectFrom('users')
      .select('first_name')
      .where('id', '=', user.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.first_name, 'Sess');
    const ok = await t.inject({
      method: 'PATCH',
      url: '/api/v1/me/',
      headers: { cookie: c.cookieHeader('/'), 'x-csrf-token': c.csrf },
      payload: { first_name: 'Changed' },
    });
    assert.equal(ok.statusCode, 200);
    assert.equal(ok.json().first_name, 'Changed');
  });

  it('a request with a bearer header never uses the session', async () => {
    const bad = await t.inject({
      url: '/api/v1/me/',
      headers: { cookie: c.cookieHeader('/'), ...bearer('svc_notarealtoken') },
    });
    assert.equal(bad.statusCode, 401);
    const other = await t.user();
    const token = await t.token(other.id, ['read:profile']);
    const res = await t.inject({ url: '/api/v1/me/', headers: { cookie: c.cookieHeader('/'), ...bearer(token) } });
    assert.equal(res.json().id, other.id);
  });

  it('a pending TOTP session or a made-up cookie is not a login', async () => {
    assert.equal(
      (await t.inject({ url: '/api/v1/me/', headers: { cookie: `svc_session=${'A'.repeat(43)}` } })).statusCode,
      401,
    );
  });

  it('marks session cookies Secure when BASE_URL is https', async () => {
    const s = await startApp({ BASE_URL: 'https://svc.example' });
    try {
      const u = await s.user();
      const d = new PageClient(s);
      const res = await d.login(u.email, TEST_PASSWORD);
      const cookie = ([] as string[])
        .concat(res.headers['set-cookie'] as string[])
        .find((line) => line.startsWith('svc_session='))!;
      assert.match(cookie, /; Secure/);
      assert.match(cookie, /HttpOnly/);
      assert.match(cookie, /SameSite=Lax/);
    } finally {
      await s.close();
    }
  });
});
