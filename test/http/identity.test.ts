// request.identity, the one answer to "who is calling", for every credential and every kind of path:
// the API reads the Authorization header or else the session cookie, pages read the cookie (either
// stage), machine paths read nothing. requireUser/requireScope answer as a route's declared scopes do.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyRequest } from 'fastify';
import { requireScope } from '../../src/http/identity.ts';
import { enrolTotp } from '../accounts/helpers.ts';
import { PageClient } from '../accounts/page-client.ts';
import { bearer, startApp, TEST_PASSWORD, type TestApp } from '../support/app.ts';

/** What a test route reports of request.identity. */
function summary(request: FastifyRequest) {
  const identity = request.identity;
  return {
    user: identity.user?.id ?? null,
    kind: identity.kind,
    credential: identity.credentialId?.split(':')[0] ?? null,
    scopes: identity.scopes === null ? null : [...identity.scopes].sort(),
    session: identity.session?.stage ?? null,
    account: identity.session?.account.id ?? null,
    refused: identity.credentialError,
  };
}

const ANONYMOUS = { user: null, kind: null, credential: null, scopes: [], session: null, account: null, refused: null };

describe('request.identity', () => {
  let t: TestApp;
  let user: { id: number; email: string };
  let token: string;
  let browser: PageClient;
  before(async () => {
    t = await startApp(
      {},
      {
        beforeReady: (app) => {
          app.get('/api/v1/test-identity/', { schema: { hide: true } }, async (request) => summary(request));
          app.get('/test-identity/', async (request) => summary(request));
          app.get('/webhooks/test-identity/', async (request) => summary(request));
          app.get('/api/v1/test-require/', { schema: { hide: true } }, async (request) => ({
            user: requireScope(request, ['read:teams']).user.id,
          }));
        },
      },
    );
    user = await t.user();
    token = await t.token(user.id, ['read:profile', 'read:teams']);
    browser = new PageClient(t);
    await browser.login(user.email, TEST_PASSWORD);
  });
  after(() => t.close());

  const get = async (url: string, headers: Record<string, string> = {}) => {
    const res = await t.inject({ url, headers });
    assert.equal(res.statusCode, 200, res.body);
    return res.json();
  };

  it('is anonymous without a credential, on every kind of path', async () => {
    for (const url of ['/api/v1/test-identity/', '/test-identity/', '/webhooks/test-identity/'])
      assert.deepEqual(await get(url), ANONYMOUS, url);
  });

  it('names the token, its scopes and no session for a bearer credential', async () => {
    assert.deepEqual(await get('/api/v1/test-identity/', bearer(token)), {
      ...ANONYMOUS,
      user: user.id,
      kind: 'pat',
      credential: 'pat',
      scopes: ['read:profile', 'read:teams'],
    });
    const issued = await t.inject({
      method: 'POST',
      url: '/api/auth/token/',
      payload: { email: user.email, password: TEST_PASSWORD, scope: 'read:profile' },
    });
    assert.equal(issued.statusCode, 200, issued.body);
    assert.deepEqual(await get('/api/v1/test-identity/', bearer(issued.json().access)), {
      ...ANONYMOUS,
      user: user.id,
      kind: 'jwt',
      credential: 'jwt',
      scopes: ['read:profile'],
    });
  });

  it('says why a presented credential was refused', async () => {
    assert.deepEqual(await get('/api/v1/test-identity/', bearer('svc_notarealtoken')), {
      ...ANONYMOUS,
      refused: 'Invalid, expired or revoked token.',
    });
    assert.deepEqual(await get('/api/v1/test-identity/', { authorization: 'Basic abc' }), {
      ...ANONYMOUS,
      refused: 'Authorization header must be "Bearer <token>".',
    });
  });

  it('is the session, with full access, for the API called with the cookie alone; the Authorization header wins', async () => {
    const cookie = browser.cookieHeader('/');
    const viaSession = {
      ...ANONYMOUS,
      user: user.id,
      kind: 'session',
      credential: 'session',
      scopes: null,
      session: 'full',
      account: user.id,
    };
    assert.deepEqual(await get('/api/v1/test-identity/', { cookie }), viaSession);
    assert.deepEqual(await get('/test-identity/', { cookie }), viaSession);
    assert.equal((await get('/api/v1/test-identity/', { cookie, ...bearer(token) })).kind, 'pat');
    // A machine path never looks at the browser's session.
    assert.deepEqual(await get('/webhooks/test-identity/', { cookie }), ANONYMOUS);
  });

  it('has the pending-TOTP session but no user on pages, and nothing on the API', async () => {
    const other = await t.user();
    const enrolling = new PageClient(t);
    await enrolling.login(other.email, TEST_PASSWORD);
    await enrolTotp(enrolling);
    const pending = new PageClient(t);
    await pending.get('/accounts/login/');
    const step = await pending.post('/accounts/login/', {
      email: other.email,
      password: TEST_PASSWORD,
      next: '/accounts/profile/',
    });
    assert.match(String(step.headers.location), /^\/accounts\/login\/totp\//);
    const cookie = pending.cookieHeader('/');
    assert.deepEqual(await get('/test-identity/', { cookie }), { ...ANONYMOUS, session: 'mfa', account: other.id });
    assert.deepEqual(await get('/api/v1/test-identity/', { cookie }), ANONYMOUS);
  });

  it('requireScope answers 401 and 403 exactly as a declared scope does', async () => {
    const anonymous = await t.inject({ url: '/api/v1/test-require/' });
    const declared = await t.inject({ url: '/api/v1/teams/' });
    assert.equal(anonymous.statusCode, 401);
    const withoutId = (body: string) => ({ ...JSON.parse(body), request_id: undefined });
    assert.deepEqual(withoutId(anonymous.body), withoutId(declared.body));
    assert.equal(anonymous.headers['www-authenticate'], declared.headers['www-authenticate']);
    const narrow = await t.token(user.id, ['read:profile']);
    const lacking = await t.inject({ url: '/api/v1/test-require/', headers: bearer(narrow) });
    assert.equal(lacking.statusCode, 403);
    assert.equal(
      lacking.json().detail,
      (await t.inject({ url: '/api/v1/teams/', headers: bearer(narrow) })).json().detail,
    );
    assert.deepEqual(await get('/api/v1/test-require/', bearer(token)), { user: user.id });
    assert.deepEqual(await get('/api/v1/test-require/', { cookie: browser.cookieHeader('/') }), { user: user.id });
  });
});
