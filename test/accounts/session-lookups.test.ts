// The session cookie is looked up (a query of the sessions table) only where a session can count:
// pages and the API called with the cookie alone. A browser's cookie travels with every request to
// the site, so machine endpoints (/o/token/ and the other OAuth endpoints machines call, /webhooks/,
// the JWT endpoint) and bearer-authenticated API calls must not pay a query for it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type {
  KyselyPlugin,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from 'kysely';
import type { Kysely } from 'kysely';
import type { Database } from '../../src/db/schema.ts';
import { STYLESHEET_PATH } from '../../src/web/static.ts';
import { startApp, TEST_PASSWORD, type TestApp } from '../support/app.ts';
import { PageClient } from './page-client.ts';

/** Counts the statements that read the sessions table. */
class SessionQueries implements KyselyPlugin {
  count = 0;
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    if (JSON.stringify(args.node).includes('"sessions"')) this.count++;
    return args.node;
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

describe('session lookups happen only where a session can count', () => {
  let t: TestApp;
  let base: string;
  let cookie: string;
  let csrf: string;
  let token: string;
  let email: string;
  const counter = new SessionQueries();
  let original: Kysely<Database>;
  before(async () => {
    t = await startApp({ SERVICE_MAILPROVIDER_WEBHOOK_ENABLED: 'true' });
    base = await t.listen();
    const user = await t.user();
    email = user.email;
    token = await t.token(user.id, ['read:profile', 'write:profile']);
    // A real, logged-in browser session: its cookie is what a browser sends with every request.
    const browser = new PageClient(t);
    await browser.login(user.email, TEST_PASSWORD);
    await browser.get('/accounts/profile/');
    cookie = browser.cookieHeader('/');
    csrf = browser.csrf;
    assert.match(cookie, /svc_session=/);
    // Every session read goes through ctx.db.kysely, which now counts them.
    original = t.ctx.db.kysely;
    t.ctx.db.kysely = original.withPlugin(counter);
  });
  after(async () => {
    t.ctx.db.kysely = original;
    await t.close();
  });

  /** Sends one request with the browser's cookies and returns its status and the session queries it made. */
  type Init = Omit<RequestInit, 'headers'> & { headers?: Record<string, string> };
  async function lookups(path: string, init: Init = {}) {
    const before = counter.count;
    const res = await fetch(`${base}${path}`, { redirect: 'manual', ...init, headers: { cookie, ...init.headers } });
    await res.arrayBuffer();
    return { status: res.status, queries: counter.count - before };
  }
  const form = (fields: Record<string, string>) => ({
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });
  const json = (method: string, body: unknown, headers: Record<string, string> = {}) => ({
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

  it('pages and the session API look the session up', async () => {
    // The profile page also counts the user's other sessions.
    const profile = await lookups('/accounts/profile/');
    assert.equal(profile.status, 200);
    assert.ok(profile.queries >= 1, `${profile.queries}`);
    assert.deepEqual(
      await lookups('/accounts/login/'),
      { status: 303, queries: 1 },
      'logged in already: on to the profile',
    );
    assert.deepEqual(await lookups('/api/v1/me/'), { status: 200, queries: 1 });
    assert.deepEqual(
      await lookups('/api/v1/me/', json('PATCH', { display_name: 'Via session' }, { 'x-csrf-token': csrf })),
      { status: 200, queries: 1 },
    );
    assert.equal((await lookups('/o/device/')).queries, 1, 'the device page is for the logged-in person');
  });

  it('bearer-authenticated API calls do not, valid token or not', async () => {
    const auth = { authorization: `Bearer ${token}` };
    assert.deepEqual(await lookups('/api/v1/me/', { headers: auth }), { status: 200, queries: 0 });
    assert.deepEqual(await lookups('/api/v1/me/', json('PATCH', { display_name: 'Via token' }, auth)), {
      status: 200,
      queries: 0,
    });
    assert.deepEqual(await lookups('/api/v1/teams/', { headers: auth }), { status: 403, queries: 0 });
    assert.deepEqual(await lookups('/api/v1/me/', { headers: { authorization: 'Bearer svc_notarealtoken' } }), {
      status: 401,
      queries: 0,
    });
  });

  it('the JWT endpoint does not', async () => {
    assert.deepEqual(await lookups('/api/auth/token/', json('POST', { email, password: TEST_PASSWORD })), {
      status: 200,
      queries: 0,
    });
    assert.deepEqual(await lookups('/api/auth/token/', json('POST', { email, password: 'wrong password' })), {
      status: 401,
      queries: 0,
    });
  });

  it('the OAuth endpoints machines call do not', async () => {
    const cases: [string, Init][] = [
      ['/o/token/', form({ grant_type: 'client_credentials', client_id: 'nope' })],
      [
        '/o/token/',
        form({ grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: 'nope', client_id: 'nope' }),
      ],
      ['/o/device-authorization/', form({ client_id: 'nope', scope: 'read:profile' })],
      ['/o/revoke/', form({ token: 'x', client_id: 'nope' })],
      ['/o/introspect/', form({ token: 'x' })],
      ['/o/jwks/', {}],
      ['/.well-known/oauth-authorization-server', {}],
    ];
    for (const [path, init] of cases) {
      const result = await lookups(path, init);
      assert.equal(result.queries, 0, `${path} (${result.status})`);
      assert.ok(result.status < 500, `${path} answered ${result.status}`);
    }
  });

  it('the mail-provider intake, health and static files do not', async () => {
    assert.deepEqual(
      await lookups('/webhooks/mailprovider/', {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: '{}',
      }),
      { status: 400, queries: 0 },
    );
    assert.deepEqual(await lookups('/healthz'), { status: 200, queries: 0 });
    assert.deepEqual(await lookups(STYLESHEET_PATH), { status: 200, queries: 0 });
    assert.equal((await lookups('/.well-known/oauth-protected-resource')).queries, 0);
  });
});
