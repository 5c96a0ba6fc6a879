// The MCP endpoint over real HTTP with the SDK's own client: tools listed by scope, tool calls that
// are the API's calls (results, problem details as tool errors, roles, validation, idempotency), the
// docs resource, both protocol revisions; and the HTTP edge: 401 challenges for missing, bad,
// API-audience, expired and revoked tokens, the step-up 403, Host/Origin 403, 405, 415, the
// protected resource metadata.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import { bearer } from '../support/app.ts';
import { get, postForm, startOAuthApp, type OAuthTestApp } from '../oauth/helpers.ts';
import { callTool, connect, initialize, mintAccessToken, rawMcp } from './helpers.ts';

const READ_TOOLS = ['get_me', 'get_team', 'list_audit_entries', 'list_invitations', 'list_members', 'list_teams'];

describe('MCP endpoint', () => {
  let t: OAuthTestApp;
  let owner: { id: number; email: string };
  let member: { id: number; email: string };
  let team: { id: string; slug: string };
  let readOnly: string;
  let full: string;
  const clients: Client[] = [];
  const client = async (token: string, mode: 'legacy' | 'auto' = 'legacy') => {
    const c = await connect(t.base, token, mode);
    clients.push(c);
    return c;
  };

  before(async () => {
    t = await startOAuthApp();
    owner = await t.user({ firstName: 'Ada' });
    member = await t.user();
    team = await t.team(owner.id, 'Engines');
    await t.member(team.id, member.id, 'member');
    readOnly = await t.token(owner.id, ['read:profile', 'read:teams']);
    full = await t.token(owner.id, []);
  });
  after(async () => {
    for (const c of clients) await c.close().catch(() => {});
    await t?.close();
  });

  it("a read-only connection lists only read tools; get_me and list_teams return the user's data", async () => {
    const c = await client(readOnly);
    const { tools } = await c.listTools();
    assert.deepEqual(tools.map((tool) => tool.name).sort(), READ_TOOLS);
    for (const tool of tools) assert.equal(tool.annotations?.readOnlyHint, true, tool.name);
    const me = await c.callTool({ name: 'get_me', arguments: {} });
    assert.equal(me.isError, undefined);
    assert.equal((me.structuredContent as any).email, owner.email);
    assert.equal(JSON.parse((me.content as any)[0].text).email, owner.email);
    const teams = await c.callTool({ name: 'list_teams', arguments: {} });
    assert.deepEqual(
      (teams.structuredContent as any).results.map((row: any) => row.id),
      [team.id],
    );
  });

  it('speaks the 2026-07-28 revision to a client that negotiates it, and the 2025 one to one that does not', async () => {
    const modern = await client(readOnly, 'auto');
    assert.equal(modern.getNegotiatedProtocolVersion(), '2026-07-28');
    assert.equal(((await modern.callTool({ name: 'get_me', arguments: {} })).structuredContent as any).id, owner.id);
    const legacy = await client(readOnly, 'legacy');
    assert.match(legacy.getNegotiatedProtocolVersion() ?? '', /^2025-/);
  });

  it('every operation with scopes is a tool named after its operationId, with its summary and annotations (webhooks off: none of theirs)', async () => {
    const doc = (await get(`${t.base}/api/schema/`)).body;
    const expected: string[] = [];
    for (const operations of Object.values<any>(doc.paths)) {
      for (const operation of Object.values<any>(operations)) {
        if (operation.security?.some((s: any) => s.oauth2) && operation.tags[0] !== 'webhooks')
          expected.push(operation.operationId);
      }
    }
    const { tools } = await (await client(full)).listTools();
    assert.deepEqual(tools.map((tool) => tool.name).sort(), expected.sort());
    assert.ok(!tools.some((tool) => tool.name.includes('jwt')), 'credential exchanges are not tools');
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    assert.equal(byName.get('get_me')!.description, "The authenticated user's profile");
    assert.deepEqual(byName.get('get_me')!.annotations, {
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: false,
    });
    assert.deepEqual(byName.get('create_team')!.annotations, {
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: false,
    });
    assert.equal(
      byName.get('create_invitation')!.annotations?.destructiveHint,
      false,
      "its `role` is the new member's, no change",
    );
    assert.deepEqual(byName.get('remove_member')!.annotations, {
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
    });
    assert.equal(byName.get('set_member_role')!.annotations?.destructiveHint, true, 'a role change');
    assert.deepEqual(byName.get('create_team')!.inputSchema.required, ['name']);
    assert.deepEqual(Object.keys(byName.get('create_invitation')!.inputSchema.properties ?? {}).sort(), [
      'email',
      'idempotency_key',
      'message',
      'role',
      'team_id',
    ]);
  });

  it('a member calling an owner-only tool gets a tool error with the problem details, and nothing changes', async () => {
    const token = await t.token(member.id, ['write:teams']);
    const result = await (
      await client(token)
    ).callTool({ name: 'update_team', arguments: { id: team.id, name: 'Renamed' } });
    assert.equal(result.isError, true);
    const problem = result.structuredContent as any;
    assert.equal(problem.status, 403);
    assert.equal(typeof problem.detail, 'string');
    assert.ok(problem.request_id);
    const after = await t.inject({ url: `/api/v1/teams/${team.id}/`, headers: bearer(full) });
    assert.equal(after.json().name, 'Engines');
  });

  it('invalid arguments are tool errors naming the field (the route validates); an unknown tool is a protocol error', async () => {
    const c = await client(full);
    const missing = await c.callTool({ name: 'create_team', arguments: {} });
    assert.equal(missing.isError, true);
    assert.deepEqual(
      (missing.structuredContent as any).errors.map((e: any) => e.field),
      ['name'],
    );
    const extra = await c.callTool({ name: 'get_me', arguments: { verbose: true } });
    assert.equal(extra.isError, true);
    assert.deepEqual((extra.structuredContent as any).errors, [{ field: 'verbose', message: 'Unknown argument.' }]);
    const unknownTeam = await c.callTool({
      name: 'get_team',
      arguments: { id: '00000000-0000-4000-8000-000000000000' },
    });
    assert.equal((unknownTeam.structuredContent as any).status, 404);
    await assert.rejects(c.callTool({ name: 'launch_missiles', arguments: {} }), /Unknown tool/);
  });

  it('idempotency_key makes a tool call replayable as on the API: one invitation for two calls', async () => {
    const c = await client(full);
    const args = { team_id: team.id, email: 'grace@example.com', role: 'member', idempotency_key: 'mcp-invite-1' };
    const first = await c.callTool({ name: 'create_invitation', arguments: args });
    const second = await c.callTool({ name: 'create_invitation', arguments: args });
    assert.equal(first.isError, undefined, JSON.stringify(first));
    assert.deepEqual(second.structuredContent, first.structuredContent);
    const rows = await t.ctx.db.kysely
      .selectFrom('invitations')
      .select('id')
      .where('team_id', '=', team.id)
      .where('email', '=', 'grace@example.com')
      .execute();
    assert.equal(rows.length, 1);
  });

  it('serves the API documentation as the docs://api resource', async () => {
    const c = await client(readOnly);
    const { resources } = await c.listResources();
    assert.deepEqual(
      resources.map((r) => r.uri),
      ['docs://api'],
    );
    const { contents } = await c.readResource({ uri: 'docs://api' });
    const text = (contents[0] as { text: string }).text;
    assert.match(text, /### get_me/);
    assert.match(text, /`POST \/api\/v1\/teams\/`, scope `write:teams`/);
  });

  it('401: no token (no error), a bad token, a JWT, an API-audience token, an expired and a revoked one (invalid_token)', async () => {
    const metadata = `resource_metadata="${t.base}/.well-known/oauth-protected-resource/mcp", scope="read:profile read:teams"`;
    const none = await rawMcp(t.base, initialize());
    assert.equal(none.status, 401);
    assert.equal(none.headers.get('www-authenticate'), `Bearer ${metadata}`);
    assert.equal(none.json.status, 401);
    const apiToken = await mintAccessToken(t, owner.id, t.base, 'read:profile');
    assert.equal(
      (await get(`${t.base}/api/v1/me/`, { authorization: `Bearer ${apiToken}` })).status,
      200,
      'a good API token',
    );
    const expired = await mintAccessToken(t, owner.id, `${t.base}/mcp`, 'read:profile', 1);
    const revoked = await mintAccessToken(t, owner.id, `${t.base}/mcp`, 'read:profile');
    assert.equal(
      (await rawMcp(t.base, initialize(), { authorization: `Bearer ${revoked}` })).status,
      200,
      'valid before its revocation',
    );
    assert.equal((await postForm(`${t.base}/o/revoke/`, { token: revoked, client_id: 'svc-cli' })).status, 200);
    const jwt = (
      await t.inject({
        method: 'POST',
        url: '/api/auth/token/',
        payload: { email: owner.email, password: 'correct horse battery staple' },
      })
    ).json().access;
    // Expiry is in whole seconds.
    await new Promise((resolve) => setTimeout(resolve, 2100));
    for (const [what, token] of [
      ['bad', 'not-a-real-token'],
      ['JWT', jwt],
      ['API audience', apiToken],
      ['expired', expired],
      ['revoked', revoked],
    ]) {
      const res = await rawMcp(t.base, initialize(), { authorization: `Bearer ${token}` });
      assert.equal(res.status, 401, what);
      assert.equal(res.headers.get('www-authenticate'), `Bearer error="invalid_token", ${metadata}`, what);
    }
  });

  it('an MCP-audience token works at /mcp and is refused by the API', async () => {
    const token = await mintAccessToken(t, owner.id, `${t.base}/mcp`, 'read:profile');
    const me = await rawMcp(t.base, callTool('get_me'), { authorization: `Bearer ${token}` });
    assert.equal(me.status, 200);
    assert.equal(me.json.result.structuredContent.id, owner.id);
    assert.equal((await get(`${t.base}/api/v1/me/`, { authorization: `Bearer ${token}` })).status, 401);
  });

  it("step-up: a tool call beyond the token's scopes is 403 insufficient_scope before the tool runs", async () => {
    const res = await rawMcp(t.base, callTool('create_team', { name: 'Never made' }), bearer(readOnly));
    assert.equal(res.status, 403);
    assert.equal(
      res.headers.get('www-authenticate'),
      `Bearer error="insufficient_scope", scope="read:profile read:teams write:teams", resource_metadata="${t.base}/.well-known/oauth-protected-resource/mcp"`,
    );
    assert.equal(res.json.detail, 'This credential lacks the "write:teams" scope.');
    const teams = await t.inject({ url: '/api/v1/teams/', headers: bearer(full) });
    assert.ok(!teams.json().results.some((row: any) => row.name === 'Never made'));
  });

  it("Host and Origin: another site is 403, this service's origin is fine", async () => {
    const foreign = await rawMcp(t.base, initialize(), { ...bearer(readOnly), origin: 'https://evil.example' });
    assert.equal(foreign.status, 403);
    assert.equal(foreign.json.status, 403);
    const own = await rawMcp(t.base, initialize(), { ...bearer(readOnly), origin: t.base });
    assert.equal(own.status, 200);
    const host = await t.inject({
      method: 'POST',
      url: '/mcp',
      headers: { ...bearer(readOnly), host: 'evil.example', 'content-type': 'application/json' },
      payload: initialize(),
    });
    assert.equal(host.statusCode, 403);
  });

  it('/mcp/ works too; GET and DELETE are 405; a non-JSON body is 415; headers of the API on every answer', async () => {
    const slash = await rawMcp(
      t.base,
      callTool('get_me'),
      { ...bearer(readOnly), 'x-request-id': 'mcp-req-1' },
      '/mcp/',
    );
    assert.equal(slash.status, 200);
    assert.equal(slash.headers.get('x-request-id'), 'mcp-req-1');
    assert.equal(slash.headers.get('x-ratelimit-limit'), '1000');
    assert.match(slash.headers.get('ratelimit') ?? '', /^"user";r=\d+;t=\d+$/);
    for (const path of ['/mcp', '/mcp/']) {
      for (const method of ['GET', 'DELETE']) {
        const res = await fetch(`${t.base}${path}`, { method, headers: bearer(readOnly) });
        assert.equal(res.status, 405, `${method} ${path}`);
        assert.equal(res.headers.get('allow'), 'POST');
      }
    }
    const text = await fetch(`${t.base}/mcp`, {
      method: 'POST',
      headers: { ...bearer(readOnly), 'content-type': 'text/plain' },
      body: 'hello',
    });
    assert.equal(text.status, 415);
  });

  it("protected resource metadata of the MCP endpoint; the root document stays the API's", async () => {
    const doc = await get(`${t.base}/.well-known/oauth-protected-resource/mcp`);
    assert.equal(doc.status, 200);
    assert.deepEqual(doc.body, {
      resource: `${t.base}/mcp`,
      authorization_servers: [t.base],
      scopes_supported: ['read:profile', 'read:teams'],
      bearer_methods_supported: ['header'],
      resource_name: 'Service API (MCP)',
      resource_documentation: `${t.base}/api/docs/`,
    });
    assert.equal((await get(`${t.base}/.well-known/oauth-protected-resource`)).body.resource, t.base);
    const as = (await get(`${t.base}/.well-known/oauth-authorization-server`)).body;
    assert.equal(as.client_id_metadata_document_supported, true);
    assert.ok(as.token_endpoint_auth_methods_supported.includes('none'));
    assert.equal(as.authorization_response_iss_parameter_supported, true);
  });
});
