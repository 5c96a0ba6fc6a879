import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startApp, TEST_PASSWORD, type TestApp } from '../support/app.ts';
import { codeFor, enrolTotp, linkInMail, mailTo } from './helpers.ts';
import { PageClient } from './page-client.ts';

const NEW_PASSWORD = 'violet submarine orchestra 42';

describe('account pages', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp();
  });
  after(() => t.close());

  const userRow = (email: string) =>
    t.ctx.db.kysely.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();

  describe('sign-up and e-mail confirmation', () => {
    it('creates an unverified user, mails a single-use link that verifies the address', async () => {
      const c = new PageClient(t);
      await c.get('/accounts/signup/');
      const res = await c.post('/accounts/signup/', { email: 'New.Person@Example.com', password: NEW_PASSWORD });
      assert.equal(res.statusCode, 200);
      assert.match(res.body, /Check your e-mail/);
      const row = await userRow('new.person@example.com');
      assert.ok(row);
      assert.equal(row.email_verified_at, null);
      const link = await linkInMail(t, 'new.person@example.com', '/accounts/confirm-email/');
      const page = await c.get(link);
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /new\.person@example\.com/);
      const confirmed = await c.post(link);
      assert.equal(confirmed.statusCode, 303);
      assert.ok((await userRow('new.person@example.com'))!.email_verified_at);
      // Single use.
      assert.equal((await c.get(link)).statusCode, 410);
      assert.equal((await c.post(link, {}, { csrf: c.csrf })).statusCode, 410);
    });

    it('answers the same for an existing address, mails its owner instead, creates nothing', async () => {
      const existing = await t.user();
      const c = new PageClient(t);
      await c.get('/accounts/signup/');
      const res = await c.post('/accounts/signup/', { email: existing.email, password: NEW_PASSWORD });
      assert.equal(res.statusCode, 200);
      assert.match(res.body, /Check your e-mail/);
      const mails = await mailTo(t, existing.email);
      assert.equal(mails.length, 1);
      assert.match(mails[0].headers.get('subject')!, /already have an svc account/);
      const count = await t.ctx.db.kysely
        .selectFrom('users')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('email', '=', existing.email)
        .executeTakeFirstOrThrow();
      assert.equal(Number(count.n), 1);
    });

    for (const [label, password, message] of [
      ['short', 'short', /at least 10 characters/],
      ['common', 'qwertyuiop', /too common/],
      ['common with digits appended', 'basketball2024', /too common/],
      ['the e-mail address', 'shorty.mcshortface@example.com', /must not be your e-mail/],
    ] as const) {
      it(`refuses a ${label} password`, async () => {
        const c = new PageClient(t);
        await c.get('/accounts/signup/');
        const res = await c.post('/accounts/signup/', { email: 'shorty.mcshortface@example.com', password });
        assert.equal(res.statusCode, 400);
        assert.match(res.body, message);
        assert.equal(await userRow('shorty.mcshortface@example.com'), undefined);
      });
    }

    it('refuses an invalid or expired confirmation key', async () => {
      const c = new PageClient(t);
      assert.equal((await c.get('/accounts/confirm-email/nope/')).statusCode, 410);
      const user = await t.user({ verified: false });
      await c.login(user.email, TEST_PASSWORD);
      await c.get('/accounts/profile/');
      await c.post('/accounts/confirm-email/resend/', { next: '/accounts/profile/' });
      const link = await linkInMail(t, user.email, '/accounts/confirm-email/');
      await t.ctx.db.kysely
        .updateTable('account_keys')
        .set({ expires_at: '2000-01-01T00:00:00.000Z' })
        .where('user_id', '=', user.id)
        .execute();
      assert.equal((await c.get(link)).statusCode, 410);
    });
  });

  describe('login', () => {
    it('rotates the session id at login and sets HttpOnly, SameSite=Lax cookies (no Secure on http)', async () => {
      const user = await t.user();
      const c = new PageClient(t);
      await c.login(user.email, TEST_PASSWORD);
      const first = c.jar.get('svc_session')!.value;
      await c.get('/accounts/profile/');
      const res = await c.post('/accounts/login/', { email: user.email, password: TEST_PASSWORD });
      assert.equal(res.statusCode, 303);
      const cookie = ([] as string[])
        .concat(res.headers['set-cookie'] as string[])
        .find((line) => line.startsWith('svc_session='))!;
      assert.match(cookie, /HttpOnly/);
      assert.match(cookie, /SameSite=Lax/);
      assert.doesNotMatch(cookie, /Secure/);
      assert.notEqual(c.jar.get('svc_session')!.value, first);
      // The old session is gone from the database.
      const sessions = await t.ctx.db.kysely
        .selectFrom('sessions')
        .select('id')
        .where('user_id', '=', user.id)
        .execute();
      assert.equal(sessions.length, 1);
    });

    it('gives one message for a wrong password and an unknown e-mail', async () => {
      const user = await t.user();
      const c = new PageClient(t);
      await c.get('/accounts/login/');
      const wrong = await c.post('/accounts/login/', { email: user.email, password: 'wrong password!!' });
      const unknown = await c.post('/accounts/login/', { email: 'nobody@example.com', password: 'wrong password!!' });
      assert.equal(wrong.statusCode, 400);
      assert.equal(unknown.statusCode, 400);
      const message = (body: string) => /<p class="error" role="alert">([^<]*)</.exec(body)![1];
      assert.equal(message(wrong.body), message(unknown.body));
      assert.equal(c.jar.get('svc_session'), undefined);
    });

    it('locks an (account, address) pair after 5 failures, the same for unknown accounts', async () => {
      for (const email of [(await t.user()).email, 'ghost@example.com']) {
        const c = new PageClient(t);
        await c.get('/accounts/login/');
        for (let i = 0; i < 5; i++)
          assert.equal((await c.post('/accounts/login/', { email, password: 'not the password' })).statusCode, 400);
        const locked = await c.post('/accounts/login/', { email, password: TEST_PASSWORD });
        assert.equal(locked.statusCode, 429);
        assert.match(locked.body, /Too many failed attempts/);
        assert.ok(Number(locked.headers['retry-after']) > 0);
        assert.equal(c.jar.get('svc_session'), undefined);
      }
    });

    it('only redirects to local paths after login', async () => {
      const user = await t.user();
      for (const [next, expected] of [
        ['/accounts/tokens/', '/accounts/tokens/'],
        ['https://evil.example/', '/accounts/profile/'],
        ['//evil.example/', '/accounts/profile/'],
        ['/\\evil.example/', '/accounts/profile/'],
      ]) {
        const c = new PageClient(t);
        await c.get(`/accounts/login/?next=${encodeURIComponent(next)}`);
        const res = await c.post('/accounts/login/', { email: user.email, password: TEST_PASSWORD, next });
        assert.equal(res.statusCode, 303);
        assert.equal(res.headers.location, expected);
      }
    });

    it('sends anonymous visitors of a private page to login with next', async () => {
      const c = new PageClient(t);
      const res = await c.get('/accounts/tokens/');
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, '/accounts/login/?next=%2Faccounts%2Ftokens%2F');
    });

    it('logs out with a POST and the session stops working', async () => {
      const user = await t.user();
      const c = new PageClient(t);
      await c.login(user.email, TEST_PASSWORD);
      const cookie = c.cookieHeader('/');
      await c.get('/accounts/profile/');
      const res = await c.post('/accounts/logout/');
      assert.equal(res.statusCode, 303);
      assert.equal(c.jar.get('svc_session'), undefined);
      const replay = await t.inject({ url: '/accounts/profile/', headers: { cookie } });
      assert.equal(replay.statusCode, 303);
      assert.equal((await t.inject({ url: '/api/v1/me/', headers: { cookie } })).statusCode, 401);
    });

    it("a deactivated user's session is dead on the next request", async () => {
      const user = await t.user();
      const c = new PageClient(t);
      await c.login(user.email, TEST_PASSWORD);
      assert.equal((await c.get('/accounts/profile/')).statusCode, 200);
      await t.ctx.db.kysely.updateTable('users').set({ is_active: 0 }).where('id', '=', user.id).execute();
      assert.equal((await c.get('/accounts/profile/')).statusCode, 303);
      assert.equal((await t.inject({ url: '/api/v1/me/', headers: { cookie: c.cookieHeader('/') } })).statusCode, 401);
    });
  });

  describe('CSRF', () => {
    it('refuses every form POST without a valid token with 403 and changes nothing', async () => {
      const user = await t.user({ firstName: 'Before' });
      const c = new PageClient(t);
      await c.login(user.email, TEST_PASSWORD);
      await c.get('/accounts/profile/');
      const forms: Array<[string, Record<string, string>]> = [
        ['/accounts/profile/', { first_name: 'After', last_name: '', display_name: '' }],
        ['/accounts/logout/', {}],
        ['/accounts/tokens/', { name: 'x', scopes: 'read:profile' }],
        ['/accounts/mfa/totp/start/', {}],
        ['/accounts/reauthenticate/', { password: TEST_PASSWORD }],
        ['/accounts/signup/', { email: 'csrf@example.com', password: NEW_PASSWORD }],
        ['/accounts/password/reset/', { email: user.email }],
        ['/accounts/login/', { email: user.email, password: TEST_PASSWORD }],
      ];
      for (const [url, fields] of forms) {
        for (const csrf of [false, 'forged-token'] as const) {
          const res = await c.post(url, fields, { csrf });
          assert.equal(res.statusCode, 403, `${url} with ${csrf}`);
          assert.match(res.headers['content-type'] as string, /text\/html/);
        }
      }
      assert.equal((await userRow(user.email))!.first_name, 'Before');
      assert.equal(await userRow('csrf@example.com'), undefined);
      assert.equal(
        (await t.ctx.db.kysely.selectFrom('user_totp').selectAll().where('user_id', '=', user.id).execute()).length,
        0,
      );
      assert.equal((await mailTo(t, user.email)).length, 0);
      assert.equal((await c.get('/accounts/profile/')).statusCode, 200); // still logged in
    });

    it('a token minted before login does not work after it (bound to the session)', async () => {
      const user = await t.user();
      const c = new PageClient(t);
      await c.get('/accounts/login/');
      const anonymousToken = c.csrf;
      await c.post('/accounts/login/', { email: user.email, password: TEST_PASSWORD });
      const res = await c.post(
        '/accounts/profile/',
        { first_name: 'X', last_name: '', display_name: '' },
        { csrf: anonymousToken },
      );
      assert.equal(res.statusCode, 403);
    });
  });

  describe('TOTP', () => {
    it('enrols with the shown secret, shows recovery codes once, and login then needs a code', async () => {
      const user = await t.user();
      const c = new PageClient(t);
      await c.login(user.email, TEST_PASSWORD);
      const { secret, codes, enrolCode } = await enrolTotp(c);
      assert.equal(codes.length, 10);
      const row = await t.ctx.db.kysely
        .selectFrom('user_totp')
        .selectAll()
        .where('user_id', '=', user.id)
        .executeTakeFirstOrThrow();
      assert.ok(row.confirmed_at);
      assert.ok(!row.secret_encrypted.includes(secret), 'the secret is encrypted at rest');
      // A reload does not show the codes again.
      const again = await c.get('/accounts/mfa/recovery-codes/');
      assert.doesNotMatch(again.body, /<li>[a-z0-9]{5}-[a-z0-9]{5}<\/li>/);

      const d = new PageClient(t);
      const step1 = await d.login(user.email, TEST_PASSWORD);
      assert.equal(step1.headers.location, '/accounts/login/totp/?next=%2Faccounts%2Fprofile%2F');
      // Password alone is not a login.
      assert.equal((await d.get('/accounts/profile/')).statusCode, 303);
      assert.equal((await t.inject({ url: '/api/v1/me/', headers: { cookie: d.cookieHeader('/') } })).statusCode, 401);
      await d.get('/accounts/login/totp/');
      const pendingCookie = d.jar.get('svc_session')!.value;
      assert.equal(
        (await d.post('/accounts/login/totp/', { code: '000000', next: '/accounts/profile/' })).statusCode,
        400,
      );
      // The code used to confirm enrolment cannot be replayed; the next step's code works.
      assert.equal(
        (await d.post('/accounts/login/totp/', { code: enrolCode, next: '/accounts/profile/' })).statusCode,
        400,
      );
      const ok = await d.post('/accounts/login/totp/', { code: codeFor(secret, 1), next: '/accounts/profile/' });
      assert.equal(ok.statusCode, 303);
      assert.notEqual(
        d.jar.get('svc_session')!.value,
        pendingCookie,
        'the session id changes again after the TOTP step',
      );
      assert.equal((await d.get('/accounts/profile/')).statusCode, 200);

      // A recovery code works once.
      const e = new PageClient(t);
      await e.login(user.email, TEST_PASSWORD);
      await e.get('/accounts/login/totp/');
      assert.equal(
        (await e.post('/accounts/login/totp/', { code: codes[0], next: '/accounts/profile/' })).statusCode,
        303,
      );
      const f = new PageClient(t);
      await f.login(user.email, TEST_PASSWORD);
      await f.get('/accounts/login/totp/');
      assert.equal(
        (await f.post('/accounts/login/totp/', { code: codes[0], next: '/accounts/profile/' })).statusCode,
        400,
      );
    });

    it('starting enrolment needs a recent re-authentication', async () => {
      const user = await t.user();
      const c = new PageClient(t);
      await c.login(user.email, TEST_PASSWORD);
      await t.ctx.db.kysely
        .updateTable('sessions')
        .set({ reauth_at: '2000-01-01T00:00:00.000Z' })
        .where('user_id', '=', user.id)
        .execute();
      await c.get('/accounts/mfa/');
      const res = await c.post('/accounts/mfa/totp/start/');
      assert.equal(res.headers.location, '/accounts/reauthenticate/?next=%2Faccounts%2Fmfa%2F');
      assert.equal(
        await t.ctx.db.kysely.selectFrom('user_totp').selectAll().where('user_id', '=', user.id).executeTakeFirst(),
        undefined,
      );
    });

    it('turning TOTP off needs a recent re-authentication', async () => {
      const user = await t.user();
      const c = new PageClient(t);
      await c.login(user.email, TEST_PASSWORD);
      const { secret } = await enrolTotp(c);
      await t.ctx.db.kysely
        .updateTable('sessions')
        .set({ reauth_at: '2000-01-01T00:00:00.000Z' })
        .where('user_id', '=', user.id)
        .execute();
      await c.get('/accounts/mfa/');
      const res = await c.post('/accounts/mfa/totp/deactivate/');
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, '/accounts/reauthenticate/?next=%2Faccounts%2Fmfa%2F');
      assert.ok(
        await t.ctx.db.kysely.selectFrom('user_totp').selectAll().where('user_id', '=', user.id).executeTakeFirst(),
      );
      await c.get(String(res.headers.location));
      assert.match(c.lastHtml, /Code from your authenticator app/);
      const back = await c.post('/accounts/reauthenticate/', { code: codeFor(secret, 1), next: '/accounts/mfa/' });
      assert.equal(back.headers.location, '/accounts/mfa/');
      await c.get('/accounts/mfa/');
      assert.equal((await c.post('/accounts/mfa/totp/deactivate/')).statusCode, 303);
      assert.equal(
        await t.ctx.db.kysely.selectFrom('user_totp').selectAll().where('user_id', '=', user.id).executeTakeFirst(),
        undefined,
      );
    });
  });

  describe('re-authentication', () => {
    it('accepts the password, refuses a wrong one, and only returns to local paths', async () => {
      const user = await t.user();
      const c = new PageClient(t);
      await c.login(user.email, TEST_PASSWORD);
      await c.get('/accounts/reauthenticate/?next=/accounts/tokens/');
      assert.equal(
        (await c.post('/accounts/reauthenticate/', { password: 'wrong password!!', next: '/accounts/tokens/' }))
          .statusCode,
        400,
      );
      const ok = await c.post('/accounts/reauthenticate/', { password: TEST_PASSWORD, next: 'https://evil.example/x' });
      assert.equal(ok.statusCode, 303);
      assert.equal(ok.headers.location, '/accounts/profile/');
    });
  });

  describe('password reset', () => {
    it('mails a link, sets the new password, ends every session, and the link is single use', async () => {
      const user = await t.user();
      const other = new PageClient(t);
      await other.login(user.email, TEST_PASSWORD);
      const c = new PageClient(t);
      await c.get('/accounts/password/reset/');
      const res = await c.post('/accounts/password/reset/', { email: user.email.toUpperCase() });
      assert.equal(res.headers.location, '/accounts/password/reset/done/');
      const link = await linkInMail(t, user.email, '/accounts/password/reset/key/');
      await c.get(link);
      assert.equal((await c.post(link, { password: 'short' })).statusCode, 400);
      const done = await c.post(link, { password: NEW_PASSWORD });
      assert.equal(done.statusCode, 303);
      assert.equal((await other.get('/accounts/profile/')).statusCode, 303, 'other sessions ended');
      await c.login(user.email, NEW_PASSWORD);
      assert.equal((await c.get(link)).statusCode, 410);
      const mails = await mailTo(t, user.email);
      assert.match(mails.at(-1)!.headers.get('subject')!, /password was changed/);
    });

    it('limits reset requests per (address, client): the 6th within 15 minutes is 429 and sends nothing', async () => {
      const user = await t.user();
      const c = new PageClient(t);
      await c.get('/accounts/password/reset/');
      for (let i = 0; i < 5; i++)
        assert.equal((await c.post('/accounts/password/reset/', { email: user.email })).statusCode, 303);
      const locked = await c.post('/accounts/password/reset/', { email: user.email });
      assert.equal(locked.statusCode, 429);
      assert.ok(Number(locked.headers['retry-after']) > 0);
      assert.equal((await mailTo(t, user.email)).length, 5);
    });

    it('answers the same for an unknown address and sends nothing', async () => {
      const c = new PageClient(t);
      await c.get('/accounts/password/reset/');
      const res = await c.post('/accounts/password/reset/', { email: 'nobody-here@example.com' });
      assert.equal(res.headers.location, '/accounts/password/reset/done/');
      assert.equal((await mailTo(t, 'nobody-here@example.com')).length, 0);
    });
  });

  describe('sessions', () => {
    it('"Log out all other sessions" ends the others and keeps this one', async () => {
      const user = await t.user();
      const phone = new PageClient(t);
      await phone.login(user.email, TEST_PASSWORD);
      const laptop = new PageClient(t);
      await laptop.login(user.email, TEST_PASSWORD);
      const page = await laptop.get('/accounts/profile/');
      assert.match(page.body, /logged in on <strong>2<\/strong> browsers/);
      const res = await laptop.post('/accounts/sessions/end-others/');
      assert.equal(res.statusCode, 303);
      assert.equal((await phone.get('/accounts/profile/')).statusCode, 303);
      const after = await laptop.follow(res);
      assert.equal(after.statusCode, 200);
      assert.match(after.body, /logged in on <strong>1<\/strong> browser /);
    });
  });

  describe('profile', () => {
    it('saves names, escapes them on the page, refuses links', async () => {
      const user = await t.user();
      const c = new PageClient(t);
      await c.login(user.email, TEST_PASSWORD);
      await c.get('/accounts/profile/');
      const saved = await c.post('/accounts/profile/', {
        first_name: '<b>Ada</b>',
        last_name: 'Lovelace',
        display_name: 'Ada',
      });
      assert.equal(saved.statusCode, 303);
      const page = await c.follow(saved);
      assert.match(page.body, /value="&lt;b&gt;Ada&lt;\/b&gt;"/);
      assert.doesNotMatch(page.body, /<b>Ada<\/b>/);
      assert.match(page.body, /Your profile has been saved/);
      const refused = await c.post('/accounts/profile/', {
        first_name: 'Visit evil.com',
        last_name: '',
        display_name: '',
      });
      assert.equal(refused.statusCode, 400);
      assert.equal((await userRow(user.email))!.first_name, '<b>Ada</b>');
    });
  });
});
