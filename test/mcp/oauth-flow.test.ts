// From the bare <base>/mcp to tool calls, with the SDK's own client (its OAuthClientProvider
// interface implemented in memory, as a host application does) and the real login and consent
// pages in headless Chromium: discovery from the 401, registration by DCR and by a Client ID
// Metadata Document the test serves over HTTPS (on a loopback address the SSRF guard is told to
// allow), code + PKCE, read tools only, get_me and list_teams; then create_team, the 403 step-up,
// consent to the wider scope, success, the team in the REST API and an event of the new team
// emitted; the tokens bound to the MCP endpoint (401 on the API, an API token 401 at /mcp);
// rotating refresh tokens for the public client; a revoked token is 401.
import assert from 'node:assert/strict';
import https from 'node:https';
import tls from 'node:tls';
import { after, before, describe, it } from 'node:test';
import {
  Client,
  StreamableHTTPClientTransport,
  UnauthorizedError,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
} from '@modelcontextprotocol/client';
import type { Browser, Page } from 'playwright-core';
import { bearer } from '../support/app.ts';
import {
  callbackServer,
  get,
  launchBrowser,
  logIn,
  pkce,
  postForm,
  screenshot,
  startOAuthApp,
  type Callback,
  type OAuthTestApp,
} from '../oauth/helpers.ts';
import { testPki } from '../support/tls.ts';

import { rawMcp, initialize } from './helpers.ts';

/** What a host application keeps for one MCP server: here, in memory. */
class MemoryOAuthProvider implements OAuthClientProvider {
  info?: StoredOAuthClientInformation;
  tokenSet?: StoredOAuthTokens;
  discovery?: OAuthDiscoveryState;
  verifier = '';
  authorizationUrl: URL | null = null;
  readonly redirectUrl: string;
  readonly clientMetadataUrl?: string;
  constructor(redirectUrl: string, clientMetadataUrl?: string) {
    this.redirectUrl = redirectUrl;
    this.clientMetadataUrl = clientMetadataUrl;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Test Agent',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: StoredOAuthClientInformation) {
    this.info = info;
  }
  tokens() {
    return this.tokenSet;
  }
  saveTokens(tokens: StoredOAuthTokens) {
    this.tokenSet = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  discoveryState() {
    return this.discovery;
  }
  saveDiscoveryState(state: OAuthDiscoveryState) {
    this.discovery = state;
  }
}

describe('MCP authorization end to end (SDK client, Chromium)', () => {
  let t: OAuthTestApp;
  let browser: Browser;
  let page: Page;
  let callback: Callback;
  let documents: https.Server;
  let documentsBase: string;
  let documentFetches = 0;
  let user: { id: number; email: string };
  let pat: string;

  /** The person's part: log in when asked, check the consent page, approve; returns the callback URL. */
  async function approve(
    url: URL,
    shot: string,
  ): Promise<{ code: string; iss: string; facts: Record<string, unknown> }> {
    const before = callback.received.length;
    await page.goto(url.href);
    if (new URL(page.url()).pathname === '/accounts/login/') await logIn(page, user.email);
    await page.waitForSelector('#approve');
    const facts = {
      client: await page.locator('.client-name').textContent(),
      publishedBy: (await page.locator('.client-id-host').count())
        ? await page.locator('.client-id-host code').textContent()
        : null,
      redirectHost: await page.locator('.redirect-host code').textContent(),
      localWarning: await page.locator('#localhost-warning').count(),
      scopes: await page.locator('.scopes li').evaluateAll((items) => items.map((li) => li.getAttribute('data-scope'))),
    };
    await screenshot(page, `mcp-${shot}`);
    await Promise.all([page.waitForURL((next) => next.href.startsWith(callback.url)), page.click('#approve')]);
    assert.equal(callback.received.length, before + 1);
    const back = callback.received.at(-1)!;
    return { code: back.searchParams.get('code')!, iss: back.searchParams.get('iss')!, facts };
  }

  const newTransport = (provider: OAuthClientProvider) =>
    new StreamableHTTPClientTransport(new URL(`${t.base}/mcp`), { authProvider: provider });
  const newClient = () => new Client({ name: 'e2e-agent', version: '1.0.0' });

  // Restored after: files may share a process (`npm run test:fast`).
  const defaultCAs = tls.getCACertificates('default');
  before(async () => {
    const pki = await testPki();
    // The service fetches the metadata document over HTTPS from the test's server, signed by the test CA.
    tls.setDefaultCACertificates([...defaultCAs, pki.caPem]);
    documents = https.createServer({ cert: pki.certPem, key: pki.keyPem }, (req, res) => {
      documentFetches++;
      const clientId = `${documentsBase}${req.url}`;
      res.writeHead(req.url === '/agent.json' ? 200 : 404, {
        'content-type': 'application/json',
        'cache-control': 'max-age=60',
      });
      res.end(
        JSON.stringify({
          client_id: clientId,
          client_name: 'Metadata Agent',
          redirect_uris: [callback.url],
          grant_types: ['authorization_code', 'refresh_token'],
          token_endpoint_auth_method: 'none',
        }),
      );
    });
    await new Promise<void>((resolve) => documents.listen(0, '127.0.0.1', resolve));
    documentsBase = `https://127.0.0.1:${(documents.address() as { port: number }).port}`;
    t = await startOAuthApp({ SERVICE_WEBHOOKS_ENABLED: 'true', SERVICE_WEBHOOKS_ALLOWED_CIDRS: '127.0.0.1/32' });
    callback = await callbackServer();
    browser = await launchBrowser();
    page = await (await browser.newContext()).newPage();
    user = await t.user({ firstName: 'Ada' });
    pat = await t.token(user.id, []);
    await t.team(user.id, 'Existing');
  });
  after(async () => {
    tls.setDefaultCACertificates(defaultCAs);
    await browser?.close();
    await callback?.close();
    documents?.closeAllConnections();
    documents?.close();
    await t?.close();
  });

  it('DCR: discovery, registration, login and consent, read tools; step-up to create_team; tokens bound to /mcp', async () => {
    const provider = new MemoryOAuthProvider(callback.url);
    const first = newTransport(provider);
    await assert.rejects(newClient().connect(first), UnauthorizedError);
    const clientId = provider.info!.client_id;
    const registered = await t.ctx.db.kysely
      .selectFrom('oauth_models')
      .select('payload')
      .where('model', '=', 'Client')
      .where('id', '=', clientId)
      .executeTakeFirstOrThrow();
    assert.equal(
      JSON.parse(registered.payload).svc_registered_scope,
      'read:profile read:teams',
      'registered with the scopes of the 401 challenge',
    );
    assert.equal(provider.authorizationUrl!.searchParams.get('resource'), `${t.base}/mcp`);

    const consent = await approve(provider.authorizationUrl!, 'dcr-consent');
    assert.deepEqual(consent.facts, {
      client: 'Test Agent',
      publishedBy: null,
      redirectHost: new URL(callback.url).host,
      localWarning: 1,
      scopes: ['read:profile', 'read:teams'],
    });
    assert.equal(consent.iss, t.base, 'RFC 9207 iss');
    await first.finishAuth(consent.code, consent.iss);
    assert.ok(provider.tokenSet?.refresh_token, 'a public client gets a refresh token');

    const client = newClient();
    await client.connect(newTransport(provider));
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    assert.ok(names.includes('get_me') && names.includes('list_teams'));
    assert.ok(!names.includes('create_team'), 'read tools only');
    assert.equal(
      ((await client.callTool({ name: 'get_me', arguments: {} })).structuredContent as any).email,
      user.email,
    );
    assert.deepEqual(
      ((await client.callTool({ name: 'list_teams', arguments: {} })).structuredContent as any).results.map(
        (row: any) => row.name,
      ),
      ['Existing'],
    );

    // Step-up: the transport gets the 403, asks for the wider scope, the person approves it.
    await assert.rejects(
      client.callTool({ name: 'create_team', arguments: { name: 'Made by MCP' } }),
      UnauthorizedError,
    );
    const wider = await approve(provider.authorizationUrl!, 'step-up-consent');
    assert.deepEqual(wider.facts.scopes, ['read:profile', 'read:teams', 'write:teams']);
    await (client.transport as StreamableHTTPClientTransport).finishAuth(wider.code, wider.iss);
    const created = await client.callTool({ name: 'create_team', arguments: { name: 'Made by MCP' } });
    assert.equal(created.isError, undefined, JSON.stringify(created));
    const teamId = (created.structuredContent as any).id;
    const rest = await t.inject({ url: `/api/v1/teams/${teamId}/`, headers: bearer(pat) });
    assert.equal(rest.json().name, 'Made by MCP');
    const invited = await client.callTool({
      name: 'create_invitation',
      arguments: { team_id: teamId, email: 'grace@example.com', role: 'member' },
    });
    assert.equal(invited.isError, undefined, JSON.stringify(invited));
    const events = await t.ctx.db.kysely.selectFrom('events').select('type').where('team_id', '=', teamId).execute();
    assert.deepEqual(
      events.map((e) => e.type),
      ['team.invitation.created'],
    );

    // The token is for the MCP endpoint only.
    const mcpToken = provider.tokenSet!.access_token;
    assert.equal((await get(`${t.base}/api/v1/me/`, { authorization: `Bearer ${mcpToken}` })).status, 401);

    // Refresh tokens of a public client rotate; the old one is spent.
    const oldRefresh = provider.tokenSet!.refresh_token!;
    const refreshed = await postForm(`${t.base}/o/token/`, {
      grant_type: 'refresh_token',
      refresh_token: oldRefresh,
      client_id: clientId,
    });
    assert.equal(refreshed.status, 200, refreshed.text);
    assert.notEqual(refreshed.body.refresh_token, oldRefresh);
    assert.equal(
      (await rawMcp(t.base, initialize(), { authorization: `Bearer ${refreshed.body.access_token}` })).status,
      200,
      'still for /mcp',
    );

    // The same client asking for the API (no resource): another consent, a token the MCP endpoint refuses.
    const { verifier, challenge } = pkce();
    const apiAuthorization = new URL(
      `${t.base}/o/authorize/?${new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: callback.url, scope: 'read:profile', code_challenge: challenge, code_challenge_method: 'S256' })}`,
    );
    const apiConsent = await approve(apiAuthorization, 'api-consent');
    const apiToken = await postForm(`${t.base}/o/token/`, {
      grant_type: 'authorization_code',
      code: apiConsent.code,
      code_verifier: verifier,
      redirect_uri: callback.url,
      client_id: clientId,
    });
    assert.equal(apiToken.status, 200, apiToken.text);
    assert.equal(
      (await get(`${t.base}/api/v1/me/`, { authorization: `Bearer ${apiToken.body.access_token}` })).status,
      200,
    );
    const refused = await rawMcp(t.base, initialize(), { authorization: `Bearer ${apiToken.body.access_token}` });
    assert.equal(refused.status, 401);
    assert.match(refused.headers.get('www-authenticate') ?? '', /error="invalid_token"/);

    // Revoked: 401 at once.
    assert.equal(
      (await postForm(`${t.base}/o/revoke/`, { token: refreshed.body.access_token, client_id: clientId })).status,
      200,
    );
    assert.equal(
      (await rawMcp(t.base, initialize(), { authorization: `Bearer ${refreshed.body.access_token}` })).status,
      401,
    );
  });

  it('Client ID Metadata Document: no registration; the consent page names the host publishing the client', async () => {
    const clientsBefore = await t.ctx.db.kysely
      .selectFrom('oauth_models')
      .select('id')
      .where('model', '=', 'Client')
      .execute();
    const provider = new MemoryOAuthProvider(callback.url, `${documentsBase}/agent.json`);
    const first = newTransport(provider);
    await assert.rejects(newClient().connect(first), UnauthorizedError);
    assert.equal(provider.info!.client_id, `${documentsBase}/agent.json`);
    const consent = await approve(provider.authorizationUrl!, 'cimd-consent');
    assert.deepEqual(consent.facts, {
      client: 'Metadata Agent',
      publishedBy: new URL(documentsBase).host,
      redirectHost: new URL(callback.url).host,
      localWarning: 1,
      scopes: ['read:profile', 'read:teams'],
    });
    await first.finishAuth(consent.code, consent.iss);
    const client = newClient();
    await client.connect(newTransport(provider));
    assert.equal(((await client.callTool({ name: 'get_me', arguments: {} })).structuredContent as any).id, user.id);
    await client.close();
    const clientsAfter = await t.ctx.db.kysely
      .selectFrom('oauth_models')
      .select('id')
      .where('model', '=', 'Client')
      .execute();
    assert.equal(clientsAfter.length, clientsBefore.length, 'nothing was registered');
    assert.equal(documentFetches, 1, 'fetched once, then kept as its Cache-Control (max-age=60) allows');
  });
});
