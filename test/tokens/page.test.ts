import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PageClient, textOfId } from '../accounts/page-client.ts';
import { linkInMail } from '../accounts/helpers.ts';
import { bearer, startApp, TEST_PASSWORD, type TestApp } from '../support/app.ts';

const tomorrow = () => new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);

describe('personal access token page', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp();
  });
  after(() => t.close());

  const tokenRows = (userId: number) =>
    t.ctx.db.kysely.selectFrom('personal_access_tokens').selectAll().where('user_id', '=', userId).execute();

  async function loggedIn(options: { verified?: boolean } = {}) {
    const user = await t.user({ verified: options.verified ?? true });
    const c = new PageClient(t);
    await c.login(user.email, TEST_PASSWORD);
    return { user, c };
  }

  it('creates a token, shows it exactly once, lists it, and revocation is effective on the next request', async () => {
    const { user, c } = await loggedIn();
    await c.get('/accounts/tokens/');
    assert.match(c.lastHtml, /You have no personal access tokens yet/);
    const res = await c.post('/accounts/tokens/', {
      name: 'CI <deploys>',
      scopes: ['read:profile', 'read:teams'],
      expires_at: tomorrow(),
    });
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, '/accounts/tokens/');
    const page = await c.follow(res);
    const raw = textOfId(page.body, 'new-token');
    assert.match(raw!, /^svc_[0-9A-Za-z]{36}$/);
    assert.match(page.body, /CI &lt;deploys&gt;/);
    assert.match(page.body, /read:profile, read:teams/);
    assert.equal((await t.inject({ url: '/api/v1/me/', headers: bearer(raw!) })).statusCode, 200);
    // A reload does not show it again.
    const reload = await c.get('/accounts/tokens/');
    assert.equal(textOfId(reload.body, 'new-token'), null);
    assert.ok(!reload.body.includes(raw!));
    const [row] = await tokenRows(user.id);
    assert.equal(row.expires_at, new Date(Date.parse(`${tomorrow()}T00:00:00Z`) + 86_400_000).toISOString());
    assert.ok(!JSON.stringify(row).includes(raw!), 'only the hash is stored');
    // Revoke.
    const revoked = await c.post(`/accounts/tokens/${row.id}/revoke/`);
    assert.equal(revoked.statusCode, 303);
    assert.equal((await t.inject({ url: '/api/v1/me/', headers: bearer(raw!) })).statusCode, 401);
    const listed = await c.get('/accounts/tokens/');
    assert.match(listed.body, /<td data-label="Status">revoked<\/td>/);
  });

  it("cannot revoke another user's token (404) and the token keeps working", async () => {
    const { c } = await loggedIn();
    const other = await t.user();
    const token = await t.token(other.id, ['read:profile']);
    const [row] = await tokenRows(other.id);
    await c.get('/accounts/tokens/');
    assert.equal((await c.post(`/accounts/tokens/${row.id}/revoke/`)).statusCode, 404);
    assert.equal((await t.inject({ url: '/api/v1/me/', headers: bearer(token) })).statusCode, 200);
  });

  for (const [label, fields, message] of [
    ['no name', { name: '', scopes: ['read:profile'] }, /Give the token a name/],
    ['no scope', { name: 'x' }, /at least one scope/],
    ['an unknown scope', { name: 'x', scopes: ['root'] }, /Unknown scope/],
    ['admin for a non-staff user', { name: 'x', scopes: ['admin'] }, /Unknown scope/],
    ['a past expiry', { name: 'x', scopes: ['read:profile'], expires_at: '2020-01-01' }, /after today/],
    [
      'today as expiry',
      { name: 'x', scopes: ['read:profile'], expires_at: new Date().toISOString().slice(0, 10) },
      /after today/,
    ],
    ['a malformed expiry', { name: 'x', scopes: ['read:profile'], expires_at: '2027-02-30' }, /after today/],
  ] as const) {
    it(`refuses ${label} (400, nothing created)`, async () => {
      const { user, c } = await loggedIn();
      await c.get('/accounts/tokens/');
      const res = await c.post('/accounts/tokens/', fields as Record<string, string | string[]>);
      assert.equal(res.statusCode, 400);
      assert.match(res.body, message);
      assert.equal((await tokenRows(user.id)).length, 0);
    });
  }

  it('an unverified user is told "Email address is not verified." with a resend button; POST is 403', async () => {
    const { user, c } = await loggedIn({ verified: false });
    const page = await c.get('/accounts/tokens/');
    assert.match(page.body, /Email address is not verified\./);
    assert.match(page.body, /action="\/accounts\/confirm-email\/resend\/"/);
    assert.doesNotMatch(page.body, /name="scopes"/);
    const res = await c.post('/accounts/tokens/', { name: 'x', scopes: ['read:profile'] });
    assert.equal(res.statusCode, 403);
    assert.match(res.body, /Email address is not verified\./);
    assert.equal((await tokenRows(user.id)).length, 0);
    // The resend button sends a fresh link that verifies; then the form appears.
    const resent = await c.post('/accounts/confirm-email/resend/', { next: '/accounts/tokens/' });
    assert.equal(resent.headers.location, '/accounts/tokens/');
    const link = await linkInMail(t, user.email, '/accounts/confirm-email/');
    await c.get(link);
    await c.post(link);
    assert.match((await c.get('/accounts/tokens/')).body, /name="scopes"/);
  });

  it('without a recent re-authentication, creation goes through /accounts/reauthenticate/ and back', async () => {
    const { user, c } = await loggedIn();
    await t.ctx.db.kysely
      .updateTable('sessions')
      .set({ reauth_at: new Date(Date.now() - 301_000).toISOString() })
      .where('user_id', '=', user.id)
      .execute();
    const page = await c.get('/accounts/tokens/');
    assert.match(page.body, /id="reauth-link"/);
    assert.doesNotMatch(page.body, /name="scopes"/);
    const res = await c.post('/accounts/tokens/', { name: 'x', scopes: ['read:profile'] });
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, '/accounts/reauthenticate/?next=%2Faccounts%2Ftokens%2F');
    assert.equal((await tokenRows(user.id)).length, 0);
    await c.get(String(res.headers.location));
    const back = await c.post('/accounts/reauthenticate/', { password: TEST_PASSWORD, next: '/accounts/tokens/' });
    assert.equal(back.headers.location, '/accounts/tokens/');
    await c.follow(back);
    assert.equal((await c.post('/accounts/tokens/', { name: 'x', scopes: ['read:profile'] })).statusCode, 303);
    assert.equal((await tokenRows(user.id)).length, 1);
  });

  describe('with the gates turned off', () => {
    let u: TestApp;
    before(async () => {
      u = await startApp({
        SERVICE_API_TOKEN_REQUIRE_VERIFIED_EMAIL: 'false',
        SERVICE_PAT_REQUIRE_RECENT_REAUTH: 'false',
      });
    });
    after(() => u.close());
    it('an unverified user without recent re-auth may create a token', async () => {
      const user = await u.user({ verified: false });
      const c = new PageClient(u);
      await c.login(user.email, TEST_PASSWORD);
      await u.ctx.db.kysely.updateTable('sessions').set({ reauth_at: null }).where('user_id', '=', user.id).execute();
      await c.get('/accounts/tokens/');
      assert.equal((await c.post('/accounts/tokens/', { name: 'x', scopes: ['read:profile'] })).statusCode, 303);
    });
  });
});
