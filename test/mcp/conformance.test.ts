// The MCP conformance suite's server scenarios (@modelcontextprotocol/conformance, the active suite)
// against the running service. The suite's client sends no credential, and the endpoint needs one:
// it talks to a small local proxy that adds a read-only PAT to each request and forwards everything
// else as sent (Host and Origin included, so the DNS-rebinding scenario tests the service). BASE_URL
// is the proxy's address, as it would be a load balancer's. Scenarios that do not apply (fixture
// tools and resources of the SDK's reference server, capabilities this server does not offer) are
// listed in conformance-baseline.yml; every other scenario must pass.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { startApp, type TestApp } from '../support/app.ts';
import { freePort } from '../support/net.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI = path.join(ROOT, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
const BASELINE = fileURLToPath(new URL('./conformance-baseline.yml', import.meta.url));

describe('MCP conformance suite (server scenarios)', () => {
  let t: TestApp;
  let proxy: http.Server;
  let url: string;
  let out: string;

  before(async () => {
    const proxyPort = await freePort();
    t = await startApp({ BASE_URL: `http://localhost:${proxyPort}` });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const appPort = (t.app.server.address() as net.AddressInfo).port;
    const token = await t.token((await t.user()).id, ['read:profile', 'read:teams']);
    proxy = http.createServer((req, res) => {
      const headers = { ...req.headers, authorization: req.headers.authorization ?? `Bearer ${token}` };
      const upstream = http.request(
        { host: '127.0.0.1', port: appPort, method: req.method, path: req.url, headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => proxy.listen(proxyPort, '127.0.0.1', resolve));
    url = `http://localhost:${proxyPort}/mcp`;
    out = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-conformance-'));
  });
  after(async () => {
    proxy?.closeAllConnections();
    proxy?.close();
    await t?.close();
    if (out) fs.rmSync(out, { recursive: true, force: true });
  });

  it('every applicable scenario passes, and only the listed ones fail', async () => {
    const child = spawn(process.execPath, [CLI, 'server', '--url', url, '--expected-failures', BASELINE, '-o', out], {
      cwd: out,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    const summary = output.slice(output.indexOf('=== SUMMARY ==='));
    assert.equal(code, 0, summary || output.slice(-4000));
    for (const scenario of ['server-initialize', 'ping', 'tools-list', 'resources-list', 'dns-rebinding-protection']) {
      assert.match(summary, new RegExp(`✓ ${scenario}: [1-9]\\d* passed, 0 failed`), scenario);
    }
  });
});
