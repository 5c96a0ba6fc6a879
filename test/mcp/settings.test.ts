// The MCP endpoint under other settings: turned off (404, no metadata, no resource to ask tokens
// for), webhooks on (their tools appear), a small per-user limit (a tool call is counted once, the
// 429 is the API's) and a small body limit (413).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bearer, startApp, type TestApp } from '../support/app.ts';
import { callTool, connect, initialize, rawMcp } from './helpers.ts';
import { get, postForm, startOAuthApp, type OAuthTestApp } from '../oauth/helpers.ts';

const mcpPost = (t: TestApp, token: string, body: unknown) =>
  t.inject({
    method: 'POST',
    url: '/mcp',
    headers: {
      ...bearer(token),
      host: 'testserver',
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    payload: JSON.stringify(body),
  });

describe('SERVICE_MCP_ENABLED=false', () => {
  let t: OAuthTestApp;
  before(async () => {
    t = await startOAuthApp({ SERVICE_MCP_ENABLED: 'false' });
  });
  after(() => t?.close());

  it('/mcp and its metadata are 404, discovery does not mention it, and no token can be asked for it', async () => {
    const user = await t.user();
    const token = await t.token(user.id, []);
    assert.equal((await rawMcp(t.base, initialize(), bearer(token))).status, 404);
    assert.equal((await get(`${t.base}/.well-known/oauth-protected-resource/mcp`)).status, 404);
    const root = await get(`${t.base}/.well-known/oauth-protected-resource`);
    assert.ok(!root.text.includes('/mcp'));
    assert.ok(!(await get(`${t.base}/.well-known/oauth-authorization-server`)).text.includes('/mcp'));
    const device = await postForm(`${t.base}/o/device-authorization/`, {
      client_id: 'svc-cli',
      scope: 'read:profile',
      resource: `${t.base}/mcp`,
    });
    assert.equal(device.status, 400);
    assert.equal(device.body.error, 'invalid_target');
  });
});

describe('MCP with webhooks on', () => {
  let t: OAuthTestApp;
  before(async () => {
    t = await startOAuthApp({ SERVICE_WEBHOOKS_ENABLED: 'true' });
  });
  after(() => t?.close());

  it('the webhook tools are listed for a token with the webhook scopes, and only then', async () => {
    const user = await t.user();
    const withScopes = await connect(t.base, await t.token(user.id, ['read:webhooks', 'write:webhooks']));
    const names = (await withScopes.listTools()).tools.map((tool) => tool.name);
    for (const name of [
      'create_webhook',
      'list_webhooks',
      'get_webhook',
      'update_webhook',
      'delete_webhook',
      'test_webhook',
    ])
      assert.ok(names.includes(name), name);
    assert.ok(!names.includes('get_me'));
    await withScopes.close();
    const without = await connect(t.base, await t.token(user.id, ['read:profile']));
    assert.deepEqual(
      (await without.listTools()).tools.map((tool) => tool.name),
      ['get_me'],
    );
    await without.close();
  });
});

describe('MCP under the API limits', () => {
  let t: TestApp;
  let token: string;
  before(async () => {
    t = await startApp({ SERVICE_THROTTLE_USER: '3/hour' });
    token = await t.token((await t.user()).id, ['read:profile']);
  });
  after(() => t?.close());

  it("a tool call counts once against the per-user limit; past it the endpoint answers the API's 429", async () => {
    const first = await mcpPost(t, token, callTool('get_me'));
    assert.equal(first.statusCode, 200);
    assert.equal(first.headers['x-ratelimit-remaining'], '2', "the tool call's API request was not counted again");
    await mcpPost(t, token, callTool('get_me'));
    await mcpPost(t, token, callTool('get_me'));
    const refused = await mcpPost(t, token, callTool('get_me'));
    assert.equal(refused.statusCode, 429);
    assert.match(refused.json().detail, /^Request was throttled\. Expected available in \d+ seconds\.$/);
    assert.ok(Number(refused.headers['retry-after']) > 0);
  });

  it('a body over SERVICE_BODY_LIMIT_BYTES is 413', async () => {
    const other = await startApp({ SERVICE_BODY_LIMIT_BYTES: '2048' });
    try {
      const owner = await other.token((await other.user()).id, ['read:profile']);
      const tooBig = await mcpPost(other, owner, { ...callTool('get_me'), padding: 'x'.repeat(4096) });
      assert.equal(tooBig.statusCode, 413);
      assert.equal(tooBig.json().detail, 'Request body is too large.');
    } finally {
      await other.close();
    }
  });
});
