// The fetch oidc-provider uses for Client ID Metadata Documents, against a local HTTPS server (the
// test CA is added to this process's trusted roots): https only, no redirects, 5 KB, the SSRF guard
// with its allow-list, and the registration rules applied to the document. The whole flow with the
// SDK client is in test/mcp/oauth-flow.test.ts.
import assert from 'node:assert/strict';
import https from 'node:https';
import tls from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { ScopeRegistry } from '../../src/http/scopes.ts';
import { MetadataDocumentRefused, metadataDocumentFetch } from '../../src/oauth/client-metadata-documents.ts';
import { testPki } from '../support/tls.ts';

type Handler = (base: string) => {
  status?: number;
  headers?: Record<string, string>;
  body?: string | object;
  hang?: boolean;
};

describe('Client ID Metadata Document fetch', () => {
  let server: https.Server;
  let base: string;
  const routes = new Map<string, Handler>();
  const registry = new ScopeRegistry();
  const allowed = metadataDocumentFetch({ allowedCidrs: ['127.0.0.1/32'], dnsServers: [] }, registry);

  // The process's default CA list gains the test CA for this file only: files may share a process
  // (`npm run test:fast`), and another's "unknown CA is refused" must still hold.
  const defaultCAs = tls.getCACertificates('default');
  before(async () => {
    const pki = await testPki();
    tls.setDefaultCACertificates([...defaultCAs, pki.caPem]);
    server = https.createServer({ cert: pki.certPem, key: pki.keyPem }, (req, res) => {
      const answer = routes.get(req.url ?? '')?.(base) ?? { status: 404 };
      if (answer.hang) return;
      const body = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body ?? {});
      res.writeHead(answer.status ?? 200, { 'content-type': 'application/json', ...answer.headers });
      res.end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `https://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  after(() => {
    tls.setDefaultCACertificates(defaultCAs);
    server.closeAllConnections();
    server.close();
  });

  const document = (url: string, extra: Record<string, unknown> = {}) => ({
    client_id: url,
    client_name: 'Local Agent',
    redirect_uris: ['http://127.0.0.1:33418/callback'],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
    scope: 'read:profile',
    ...extra,
  });

  it('a document becomes a public client under the registration rules; its Cache-Control is passed on', async () => {
    routes.set('/good.json', (b) => ({
      headers: { 'cache-control': 'max-age=300' },
      body: document(`${b}/good.json`, { jwks_uri: 'https://x.example/jwks' }),
    }));
    const res = await allowed(`${base}/good.json`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('cache-control'), 'max-age=300');
    const client = await res.json();
    assert.equal(client.client_id, `${base}/good.json`);
    assert.equal(client.token_endpoint_auth_method, 'none');
    assert.equal(client.svc_registered_scope, 'read:profile');
    assert.ok(client.scope.split(' ').includes('write:teams'), 'the registered scope is no ceiling');
    assert.equal(client.jwks_uri, undefined, 'fields the rules do not take are dropped');
  });

  it('refuses documents that break the rules, are too large, name another client, or want a secret', async () => {
    routes.set('/other.json', () => ({ body: document('https://elsewhere.example/client.json') }));
    routes.set('/secret.json', (b) => ({
      body: document(`${b}/secret.json`, { token_endpoint_auth_method: 'client_secret_basic' }),
    }));
    routes.set('/bad-redirect.json', (b) => ({
      body: document(`${b}/bad-redirect.json`, { redirect_uris: ['http://app.example/cb'] }),
    }));
    routes.set('/big.json', (b) => ({ body: document(`${b}/big.json`, { client_name: 'x'.repeat(6000) }) }));
    routes.set('/array.json', () => ({ body: '[1,2]' }));
    for (const path of ['/other.json', '/secret.json', '/bad-redirect.json', '/big.json', '/array.json']) {
      await assert.rejects(allowed(`${base}${path}`), MetadataDocumentRefused, path);
    }
  });

  it('follows no redirect and passes any other status on (the library then refuses the client)', async () => {
    routes.set('/moved.json', (b) => ({ status: 302, headers: { location: `${b}/good.json` } }));
    assert.equal((await allowed(`${base}/moved.json`)).status, 302);
    assert.equal((await allowed(`${base}/missing.json`)).status, 404);
  });

  it('https only; the SSRF guard refuses addresses outside the allow-list; a slow answer times out', async () => {
    await assert.rejects(allowed(`http://127.0.0.1:9/x.json`), /https only/);
    const strict = metadataDocumentFetch({ allowedCidrs: [], dnsServers: [] }, registry);
    await assert.rejects(strict(`${base}/good.json`), /loopback/);
    routes.set('/slow.json', () => ({ hang: true }));
    await assert.rejects(allowed(`${base}/slow.json`, { signal: AbortSignal.timeout(200) }), /abort|timeout/i);
  });
});
