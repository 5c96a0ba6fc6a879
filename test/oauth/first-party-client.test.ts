// The built-in public device client `svc-cli` (src/oauth/first-party.ts): there without any setup,
// device grant and refresh only, every registry scope but `admin`; turned off by
// SERVICE_OAUTH_CLI_CLIENT_ENABLED=false, after which its device authorizations are refused and the
// access tokens it was given stop working on the API.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { KyselyAdapter } from '../../src/oauth/adapter.ts';
import { createOAuthServer } from '../../src/oauth/provider.ts';
import { DEVICE_GRANT, get, pkce, postForm, startOAuthApp, type OAuthTestApp } from './helpers.ts';

describe('the svc-cli OAuth client', () => {
  describe('on by default', () => {
    let t: OAuthTestApp;
    before(async () => {
      t = await startOAuthApp();
    });
    after(() => t?.close());

    it('starts a device authorization with the fixed client_id and no registration', async () => {
      const res = await postForm(`${t.base}/o/device-authorization/`, { client_id: 'svc-cli' });
      assert.equal(res.status, 200, res.text);
      assert.match(res.body.user_code, /^[A-Z]{4}-[A-Z]{4}$/);
      assert.equal(res.body.verification_uri, `${t.base}/o/device/`);
      const row = await t.ctx.db.kysely
        .selectFrom('oauth_models')
        .select('payload')
        .where('model', '=', 'DeviceCode')
        .where('id', '=', res.body.device_code)
        .executeTakeFirstOrThrow();
      const expected = t.ctx.scopes
        .names()
        .filter((scope) => scope !== 'admin')
        .join(' ');
      assert.equal(JSON.parse(row.payload).params.scope, expected, 'every registry scope but admin');
      const clients = await t.ctx.db.kysely
        .selectFrom('oauth_models')
        .select('id')
        .where('model', '=', 'Client')
        .execute();
      assert.deepEqual(clients, [], 'a static client: no row stored');
    });

    it('refuses the admin scope and the authorization code grant', async () => {
      const admin = await postForm(`${t.base}/o/device-authorization/`, {
        client_id: 'svc-cli',
        scope: 'read:profile admin',
      });
      assert.equal(admin.status, 400);
      assert.equal(admin.body.error, 'invalid_scope');
      const { challenge } = pkce();
      const authorize = await get(
        `${t.base}/o/authorize/?client_id=svc-cli&response_type=code&scope=read:profile&code_challenge=${challenge}&code_challenge_method=S256&redirect_uri=http://127.0.0.1:9/cb`,
      );
      assert.equal(authorize.status, 400, 'a device-only client cannot start the code flow');
      assert.equal(authorize.headers.get('location'), null);
    });
  });

  describe('turned off (SERVICE_OAUTH_CLI_CLIENT_ENABLED=false)', () => {
    let t: OAuthTestApp;
    before(async () => {
      t = await startOAuthApp({ SERVICE_OAUTH_CLI_CLIENT_ENABLED: 'false' });
    });
    after(() => t?.close());

    it('refuses its device authorizations and refreshes as an unknown client', async () => {
      const res = await postForm(`${t.base}/o/device-authorization/`, { client_id: 'svc-cli' });
      assert.equal(res.status, 401, res.text);
      assert.equal(res.body.error, 'invalid_client');
      const refresh = await postForm(`${t.base}/o/token/`, {
        grant_type: 'refresh_token',
        refresh_token: 'x'.repeat(43),
        client_id: 'svc-cli',
      });
      assert.equal(refresh.body.error, 'invalid_client');
    });

    it('the access tokens it issued while it was on stop working on the API', async () => {
      const user = await t.user();
      // The same database as seen by a server where the client is still on (before the operator turned it off).
      const before = createOAuthServer({
        ...t.ctx,
        config: { ...t.ctx.config, oauth: { ...t.ctx.config.oauth, cliClientEnabled: true } },
      }).provider;
      const mint = async (clientId: string) => {
        if (clientId !== 'svc-cli') {
          await new KyselyAdapter(t.ctx.db.kysely, 'Client').upsert(clientId, {
            client_id: clientId,
            grant_types: [DEVICE_GRANT, 'refresh_token'],
            response_types: [],
            redirect_uris: [],
            token_endpoint_auth_method: 'none',
            scope: 'read:profile',
          });
        }
        const client = await before.Client.find(clientId);
        const token = new before.AccessToken({
          accountId: String(user.id),
          client: client!,
          scope: 'read:profile',
          resourceServer: {
            audience: t.base,
            scope: 'read:profile',
            accessTokenFormat: 'opaque',
            accessTokenTTL: 3600,
          },
        } as never);
        return token.save();
      };
      const cliToken = await mint('svc-cli');
      const otherToken = await mint('another-device-client');
      const other = await get(`${t.base}/api/v1/me/`, { authorization: `Bearer ${otherToken}` });
      assert.equal(other.status, 200, "another client's token still works");
      const cli = await get(`${t.base}/api/v1/me/`, { authorization: `Bearer ${cliToken}` });
      assert.equal(cli.status, 401);
    });
  });
});
