// `svc oauth create-client` in-process (runCli) against the database of a running app: what it
// prints, that the clients it makes work on the real endpoints, and its refusals (exit 2, nothing
// written).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { cli } from '../cli/cli-helpers.ts';
import { DEVICE_GRANT, basic, postForm, startOAuthApp, type OAuthTestApp } from './helpers.ts';

describe('svc oauth create-client', () => {
  let t: OAuthTestApp;
  before(async () => {
    t = await startOAuthApp();
  });
  after(() => t?.close());

  const run = (...argv: string[]) => cli(t.env, ['oauth', 'create-client', ...argv]);
  const clients = () =>
    t.ctx.db.kysely.selectFrom('oauth_models').select(['id', 'payload']).where('model', '=', 'Client').execute();

  it('a device-code client: the id alone, usable for device authorization', async () => {
    const result = await run('--name', 'Acme CLI', '--grant', 'device-code', '--scopes', 'read:profile read:teams');
    assert.equal(result.code, 0, result.stderr);
    const lines = result.stdout.trimEnd().split('\n');
    assert.equal(lines.length, 1);
    const clientId = lines[0];
    const stored = JSON.parse((await clients()).find((c) => c.id === clientId)!.payload);
    assert.equal(stored.client_name, 'Acme CLI');
    assert.deepEqual(stored.grant_types.sort(), [DEVICE_GRANT, 'refresh_token'].sort());
    assert.equal(stored.token_endpoint_auth_method, 'none');
    // The registered scope is what a request without scope asks for, no ceiling (the library's `scope`).
    assert.equal(stored.svc_registered_scope, 'read:profile read:teams');
    assert.equal(
      stored.scope,
      t.ctx.scopes
        .names()
        .filter((s) => s !== 'admin')
        .join(' '),
    );
    const res = await postForm(`${t.base}/o/device-authorization/`, { client_id: clientId, scope: 'read:profile' });
    assert.equal(res.status, 200, res.text);
  });

  it('a confidential authorization-code client: id, then the secret once; the secret authenticates', async () => {
    const result = await run(
      '--name',
      'Acme Web',
      '--grant',
      'authorization-code',
      '--redirect-uri',
      'https://app.example/cb',
      '--redirect-uri',
      'http://127.0.0.1:9000/cb',
      '--confidential',
    );
    assert.equal(result.code, 0, result.stderr);
    const [clientId, secret, ...rest] = result.stdout.trimEnd().split('\n');
    assert.deepEqual(rest, []);
    assert.ok(secret.length >= 40);
    const stored = JSON.parse((await clients()).find((c) => c.id === clientId)!.payload);
    assert.deepEqual(stored.redirect_uris, ['https://app.example/cb', 'http://127.0.0.1:9000/cb']);
    assert.equal(stored.token_endpoint_auth_method, 'client_secret_basic');
    assert.match(stored.client_secret, /^sha256:/);
    assert.equal(
      stored.scope,
      t.ctx.scopes
        .names()
        .filter((s) => s !== 'admin')
        .join(' '),
    );
    const ok = await postForm(`${t.base}/o/introspect/`, { token: 'x'.repeat(43) }, basic(clientId, secret));
    assert.equal(ok.status, 200);
    assert.deepEqual(ok.body, { active: false });
    const wrong = await postForm(`${t.base}/o/introspect/`, { token: 'x'.repeat(43) }, basic(clientId, `${secret}x`));
    assert.equal(wrong.status, 401);
  });

  it('refusals exit 2 with a message and write nothing', async () => {
    const before = (await clients()).length;
    const cases: [string[], RegExp][] = [
      [['--grant', 'device-code'], /--name is required/],
      [['--name', 'x'], /--grant is required/],
      [['--name', 'x', '--grant', 'implicit'], /--grant must be/],
      [['--name', 'x', '--grant', 'authorization-code'], /redirect_uris/],
      [['--name', 'x', '--grant', 'authorization-code', '--redirect-uri', 'http://app.example/cb'], /https/],
      [['--name', 'x', '--grant', 'device-code', '--confidential'], /--confidential is for authorization-code/],
      [
        ['--name', 'x', '--grant', 'device-code', '--redirect-uri', 'https://a.example/cb'],
        /--redirect-uri is for authorization-code/,
      ],
      [['--name', 'x', '--grant', 'device-code', '--scopes', 'read:profile nuke:all'], /unknown scope: nuke:all/],
      [['--name', 'x', '--grant', 'device-code', '--bogus'], /unknown option/],
    ];
    for (const [argv, message] of cases) {
      const result = await run(...argv);
      assert.equal(result.code, 2, `${argv.join(' ')}: ${result.stderr}`);
      assert.match(result.stderr, message);
      assert.equal(result.stdout, '');
    }
    assert.equal((await clients()).length, before);
  });
});
