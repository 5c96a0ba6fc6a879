// The authorization server's surface over real HTTP: discovery documents, exact paths (slash-less
// is 404), X-Request-ID on every /o/ answer, JWKS, RFC 9728 metadata, dynamic client registration
// rules and errors (nothing stored on refusal), DCR off, and the per-address throttle.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startApp } from '../support/app.ts';
import { DEVICE_GRANT, get, pkce, postForm, postJson, register, startOAuthApp, type OAuthTestApp } from './helpers.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('OAuth endpoints', () => {
  let t: OAuthTestApp;
  before(async () => {
    t = await startOAuthApp();
  });
  after(() => t?.close());

  const clientRows = async () =>
    Number(
      (
        await t.ctx.db.kysely
          .selectFrom('oauth_models')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('model', '=', 'Client')
          .executeTakeFirstOrThrow()
      ).n,
    );

  for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
    it(`${path} lists exactly the service's endpoints`, async () => {
      const res = await get(`${t.base}${path}`);
      assert.equal(res.status, 200);
      assert.match(res.headers.get('x-request-id') ?? '', UUID);
      const doc = res.body;
      assert.equal(doc.issuer, t.base);
      const endpoints = Object.fromEntries(
        Object.entries(doc).filter(([key]) => key.endsWith('_endpoint') || key === 'jwks_uri'),
      );
      assert.deepEqual(endpoints, {
        authorization_endpoint: `${t.base}/o/authorize/`,
        token_endpoint: `${t.base}/o/token/`,
        device_authorization_endpoint: `${t.base}/o/device-authorization/`,
        registration_endpoint: `${t.base}/o/register/`,
        revocation_endpoint: `${t.base}/o/revoke/`,
        introspection_endpoint: `${t.base}/o/introspect/`,
        jwks_uri: `${t.base}/o/jwks/`,
      });
      assert.deepEqual(doc.code_challenge_methods_supported, ['S256']);
      assert.deepEqual(doc.response_types_supported, ['code']);
      assert.deepEqual(doc.scopes_supported, t.ctx.scopes.names());
      assert.deepEqual(
        [...doc.grant_types_supported].sort(),
        ['authorization_code', 'refresh_token', DEVICE_GRANT].sort(),
      );
      assert.deepEqual([...doc.token_endpoint_auth_methods_supported].sort(), [
        'client_secret_basic',
        'client_secret_post',
        'none',
      ]);
    });
  }

  it('the slash-less form of every endpoint is 404', async () => {
    for (const path of [
      '/o/authorize',
      '/o/token',
      '/o/device-authorization',
      '/o/device',
      '/o/register',
      '/o/revoke',
      '/o/introspect',
      '/o/jwks',
    ]) {
      const res = await fetch(`${t.base}${path}`, {
        method: path === '/o/authorize' || path === '/o/jwks' || path === '/o/device' ? 'GET' : 'POST',
        redirect: 'manual',
      });
      assert.equal(res.status, 404, path);
      assert.match(res.headers.get('x-request-id') ?? '', UUID, path);
      assert.equal(res.headers.get('location'), null);
    }
  });

  it('every /o/ answer carries X-Request-ID, and a valid client value is echoed', async () => {
    const answers = [
      await get(`${t.base}/o/jwks/`),
      await get(`${t.base}/o/authorize/`),
      await get(`${t.base}/o/authorize/?client_id=nope&response_type=code`),
      await get(`${t.base}/o/device/`),
      await get(`${t.base}/o/token/`),
      await get(`${t.base}/o/nothing-here/`),
      await get(`${t.base}/o/interaction/unknown/`),
      await postForm(`${t.base}/o/token/`, { grant_type: 'authorization_code', code: 'x', client_id: 'nope' }),
      await postForm(`${t.base}/o/token/`, {}),
      await postForm(`${t.base}/o/device-authorization/`, { client_id: 'nope' }),
      await postForm(`${t.base}/o/revoke/`, { token: 'x', client_id: 'nope' }),
      await postForm(`${t.base}/o/introspect/`, { token: 'x' }),
      await postJson(`${t.base}/o/register/`, 'not json'),
    ];
    for (const res of answers)
      assert.match(res.headers.get('x-request-id') ?? '', UUID, `${res.status} ${res.text.slice(0, 80)}`);
    assert.deepEqual(
      answers.map((a) => a.status),
      [200, 400, 400, 303, 405, 404, 400, 401, 400, 401, 401, 400, 400],
    );
    assert.equal(answers[4].headers.get('allow'), 'POST, OPTIONS');
    assert.equal(answers[4].body.status, 405);
    const echoed = await postForm(`${t.base}/o/token/`, {}, { 'x-request-id': 'client-req_42' });
    assert.equal(echoed.headers.get('x-request-id'), 'client-req_42');
  });

  it('the machine endpoints set no page cookie; the browser pages (device, authorize) do', async () => {
    const machine = [
      await postForm(`${t.base}/o/token/`, { grant_type: 'authorization_code', code: 'x', client_id: 'nope' }),
      await postForm(`${t.base}/o/device-authorization/`, { client_id: 'nope' }),
      await postForm(`${t.base}/o/revoke/`, { token: 'x', client_id: 'nope' }),
      await postForm(`${t.base}/o/introspect/`, { token: 'x' }),
      await get(`${t.base}/o/jwks/`),
    ];
    for (const res of machine)
      assert.equal(res.headers.get('set-cookie'), null, `${res.status} ${res.text.slice(0, 80)}`);
    for (const page of [await get(`${t.base}/o/device/`), await get(`${t.base}/o/authorize/`)]) {
      assert.match(page.headers.get('set-cookie') ?? '', /svc_csrf=/, 'a browser page seeds the CSRF cookie');
    }
  });

  it('an OAuth request body over 56 KiB is 413 before the library reads it', async () => {
    const res = await postForm(`${t.base}/o/token/`, {
      grant_type: 'refresh_token',
      refresh_token: 'x'.repeat(60 * 1024),
    });
    assert.equal(res.status, 413);
    assert.equal(res.body.error, 'invalid_request');
    assert.match(res.headers.get('x-request-id') ?? '', UUID);
  });

  it('JWKS publishes a public signing key only', async () => {
    const res = await get(`${t.base}/o/jwks/`);
    assert.equal(res.status, 200);
    assert.equal(res.body.keys.length, 1);
    const [key] = res.body.keys;
    assert.equal(key.kty, 'OKP');
    assert.equal(key.crv, 'Ed25519');
    assert.equal(typeof key.kid, 'string');
    assert.equal(key.d, undefined);
  });

  it('RFC 9728 protected resource metadata, linked from 401 answers', async () => {
    const res = await get(`${t.base}/.well-known/oauth-protected-resource`);
    assert.equal(res.status, 200);
    assert.equal(res.body.resource, t.base);
    assert.deepEqual(res.body.authorization_servers, [t.base]);
    assert.deepEqual(res.body.scopes_supported, t.ctx.scopes.names());
    const unauthorized = await get(`${t.base}/api/v1/me/`);
    assert.equal(unauthorized.status, 401);
    assert.match(
      unauthorized.headers.get('www-authenticate') ?? '',
      new RegExp(
        `^Bearer .*resource_metadata="${t.base.replace(/\./g, '\\.')}/\\.well-known/oauth-protected-resource"`,
      ),
    );
  });

  describe('dynamic client registration', () => {
    it('a public authorization code client on a loopback redirect URI; scope defaults to the registry without admin', async () => {
      const body = await register(t.base, {
        client_name: 'Local tool',
        redirect_uris: ['http://127.0.0.1:8765/cb'],
        token_endpoint_auth_method: 'none',
      });
      assert.deepEqual(body.grant_types.sort(), ['authorization_code', 'refresh_token']);
      assert.equal(body.client_secret, undefined);
      assert.equal(
        body.scope,
        t.ctx.scopes
          .names()
          .filter((s) => s !== 'admin')
          .join(' '),
      );
    });

    it('refusals are RFC 7591 errors and store nothing', async () => {
      const before = await clientRows();
      const cases: [unknown, string, string?][] = [
        ['[]', 'invalid_client_metadata'],
        ['null', 'invalid_client_metadata'],
        ['{"client_name": ', 'invalid_client_metadata'],
        [
          { client_name: 'x', grant_types: ['client_credentials'], token_endpoint_auth_method: 'none' },
          'invalid_client_metadata',
        ],
        [
          { client_name: 'x', grant_types: ['implicit'], redirect_uris: ['https://a.example/cb'] },
          'invalid_client_metadata',
        ],
        [
          {
            client_name: 'x',
            grant_types: [DEVICE_GRANT],
            scope: 'read:profile fly:away',
            token_endpoint_auth_method: 'none',
          },
          'invalid_client_metadata',
        ],
        [
          { client_name: 'x', grant_types: [DEVICE_GRANT], scope: 'openid', token_endpoint_auth_method: 'none' },
          'invalid_client_metadata',
        ],
        [
          { client_name: 'x', grant_types: [DEVICE_GRANT], token_endpoint_auth_method: 'private_key_jwt' },
          'invalid_client_metadata',
        ],
        [{ client_name: 'x', grant_types: ['authorization_code'] }, 'invalid_redirect_uri'],
        [{ client_name: 'x', grant_types: ['authorization_code'], redirect_uris: [] }, 'invalid_redirect_uri'],
        [{ client_name: 'x', redirect_uris: ['http://app.example/cb'] }, 'invalid_redirect_uri'],
        [{ client_name: 'x', redirect_uris: ['https://app.example/cb#frag'] }, 'invalid_redirect_uri'],
        [{ client_name: 'x', redirect_uris: ['com.example.app:/cb'] }, 'invalid_redirect_uri'],
        [{ client_name: 'x', redirect_uris: ['not a uri'] }, 'invalid_redirect_uri'],
      ];
      for (const [body, error] of cases) {
        const res = await postJson(`${t.base}/o/register/`, body);
        assert.equal(res.status, 400, JSON.stringify(body));
        assert.equal(res.body.error, error, JSON.stringify(body));
        assert.equal(typeof res.body.error_description, 'string');
      }
      const form = await postForm(`${t.base}/o/register/`, { client_name: 'x' });
      assert.equal(form.status, 400);
      assert.equal(form.body.error, 'invalid_client_metadata');
      assert.equal(await clientRows(), before);
    });

    it('a confidential secret is stored as a digest only', async () => {
      const body = await register(t.base, { client_name: 'Secretive', redirect_uris: ['https://app.example/cb'] });
      const row = await t.ctx.db.kysely
        .selectFrom('oauth_models')
        .select('payload')
        .where('model', '=', 'Client')
        .where('id', '=', body.client_id)
        .executeTakeFirstOrThrow();
      assert.ok(!row.payload.includes(body.client_secret));
      assert.match(JSON.parse(row.payload).client_secret, /^sha256:/);
    });
  });
});

describe('OAuth with DCR off', () => {
  let t: OAuthTestApp;
  before(async () => {
    t = await startOAuthApp({ DCR_ENABLED: 'false' });
  });
  after(() => t?.close());

  it('POST /o/register/ is 404 and discovery has no registration_endpoint', async () => {
    const res = await postJson(`${t.base}/o/register/`, {
      client_name: 'x',
      grant_types: [DEVICE_GRANT],
      token_endpoint_auth_method: 'none',
    });
    assert.equal(res.status, 404);
    assert.match(res.headers.get('x-request-id') ?? '', UUID);
    const doc = await get(`${t.base}/.well-known/oauth-authorization-server`);
    assert.equal(doc.body.registration_endpoint, undefined);
  });
});

describe('OAuth throttling (SERVICE_THROTTLE_AUTH)', () => {
  let t: OAuthTestApp;
  before(async () => {
    t = await startOAuthApp({ SERVICE_THROTTLE_AUTH: '3/minute' });
  });
  after(() => t?.close());

  it('registration, device authorization and the token endpoint share the per-address bucket; live device-code polling does not', async () => {
    const client = await register(t.base, {
      client_name: 'CLI',
      grant_types: [DEVICE_GRANT],
      token_endpoint_auth_method: 'none',
      scope: 'read:profile',
    });
    const started = await postForm(`${t.base}/o/device-authorization/`, { client_id: client.client_id });
    assert.equal(started.status, 200);
    assert.equal(started.headers.get('x-ratelimit-limit'), '3');
    assert.equal(started.headers.get('x-ratelimit-remaining'), '1');
    const third = await postForm(`${t.base}/o/token/`, {
      grant_type: 'refresh_token',
      refresh_token: 'nope',
      client_id: client.client_id,
    });
    assert.equal(third.status, 400);
    assert.equal(third.headers.get('x-ratelimit-remaining'), '0');
    const refused = await postJson(`${t.base}/o/register/`, {
      client_name: 'CLI 2',
      grant_types: [DEVICE_GRANT],
      token_endpoint_auth_method: 'none',
    });
    assert.equal(refused.status, 429);
    assert.match(refused.headers.get('x-request-id') ?? '', UUID);
    const seconds = Number(refused.headers.get('retry-after'));
    assert.ok(seconds >= 1 && seconds <= 60);
    assert.equal(
      refused.body.detail,
      `Request was throttled. Expected available in ${seconds} second${seconds === 1 ? '' : 's'}.`,
    );
    assert.equal((await postForm(`${t.base}/o/device-authorization/`, { client_id: client.client_id })).status, 429);
    // Polling with the live device code is governed by slow_down, not the throttle.
    const poll = () =>
      postForm(`${t.base}/o/token/`, {
        grant_type: DEVICE_GRANT,
        device_code: started.body.device_code,
        client_id: client.client_id,
      });
    assert.equal((await poll()).body.error, 'authorization_pending');
    assert.equal((await poll()).body.error, 'slow_down');
    // An unknown device code is not polling: throttled.
    assert.equal(
      (
        await postForm(`${t.base}/o/token/`, {
          grant_type: DEVICE_GRANT,
          device_code: 'made-up',
          client_id: client.client_id,
        })
      ).status,
      429,
    );
    // Nothing registered by the refused request.
    const rows = await t.ctx.db.kysely.selectFrom('oauth_models').select('id').where('model', '=', 'Client').execute();
    assert.equal(rows.length, 1);
  });
});

describe('OAuth behind https (BASE_URL https://…, TLS ended by a proxy)', () => {
  let t: Awaited<ReturnType<typeof startApp>>;
  before(async () => {
    t = await startApp({ BASE_URL: 'https://svc.example' });
  });
  after(() => t?.close());

  it('the issuer is BASE_URL and the authorization server cookies are Secure', async () => {
    const doc = await t.inject({
      url: '/.well-known/oauth-authorization-server',
      headers: { 'x-forwarded-host': 'evil.example' },
    });
    assert.equal(doc.json().issuer, 'https://svc.example');
    assert.equal(doc.json().token_endpoint, 'https://svc.example/o/token/');
    const registered = await t.inject({
      method: 'POST',
      url: '/o/register/',
      payload: { client_name: 'Web', redirect_uris: ['https://app.example/cb'], token_endpoint_auth_method: 'none' },
    });
    assert.equal(registered.statusCode, 201, registered.body);
    const device = await t.inject({
      method: 'POST',
      url: '/o/register/',
      payload: { client_name: 'CLI', grant_types: [DEVICE_GRANT], token_endpoint_auth_method: 'none' },
    });
    const started = await t.inject({
      method: 'POST',
      url: '/o/device-authorization/',
      payload: `client_id=${device.json().client_id}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', host: 'internal:8000' },
    });
    assert.equal(started.json().verification_uri, 'https://svc.example/o/device/');
    const { challenge } = pkce();
    const res = await t.inject({
      url: `/o/authorize/?${new URLSearchParams({ response_type: 'code', client_id: registered.json().client_id, redirect_uri: 'https://app.example/cb', scope: 'read:profile', code_challenge: challenge, code_challenge_method: 'S256' })}`,
    });
    assert.equal(res.statusCode, 303);
    assert.match(String(res.headers.location), /^\/o\/interaction\/[A-Za-z0-9_-]+\/$/);
    const cookies = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
    assert.ok(
      cookies.some((c) => c.startsWith('svc_oauth_interaction=')),
      cookies.join(' | '),
    );
    for (const cookie of cookies.filter((c) => c.startsWith('svc_oauth_'))) {
      assert.match(cookie, /; secure/i, cookie);
      assert.match(cookie, /; httponly/i, cookie);
      assert.match(cookie, /; samesite=lax/i, cookie);
    }
  });
});
