// Helpers for the MCP tests: the SDK's own client (unmodified) on a real socket, raw JSON-RPC posts,
// and OAuth access tokens minted through the provider for a given audience (the browser flow itself
// is in oauth-flow.test.ts).
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { TestApp } from '../support/app.ts';

export const MCP_ACCEPT = 'application/json, text/event-stream';

/** An SDK client connected to `<base>/mcp` with a fixed bearer token; `auto` negotiates the 2026-07-28 revision. */
export async function connect(base: string, token: string, mode: 'legacy' | 'auto' = 'legacy'): Promise<Client> {
  const client = new Client({ name: 'svc-tests', version: '1.0.0' }, { versionNegotiation: { mode } });
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
    authProvider: { token: async () => token },
  });
  await client.connect(transport);
  return client;
}

export interface RawAnswer {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

/** One POST to the endpoint as a 2025-revision client sends it (no session, JSON-RPC body). */
export async function rawMcp(
  base: string,
  body: unknown,
  headers: Record<string, string> = {},
  path = '/mcp',
): Promise<RawAnswer> {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: MCP_ACCEPT,
      'mcp-protocol-version': '2025-06-18',
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = null;
  }
  return { status: res.status, headers: res.headers, text, json };
}

export const initialize = (id = 1) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

export const callTool = (name: string, args: Record<string, unknown> = {}, id = 7) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

/**
 * An OAuth access token of the built-in `svc-cli` client for `userId`, issued for `audience` (the
 * API is BASE_URL, the MCP endpoint BASE_URL/mcp), as the token endpoint would store it.
 */
export async function mintAccessToken(
  t: TestApp,
  userId: number,
  audience: string,
  scope: string,
  ttlSeconds = 3600,
): Promise<string> {
  const { provider } = await t.ctx.oauth.get();
  const client = await provider.Client.find('svc-cli');
  const grant = new provider.Grant({ accountId: String(userId), clientId: 'svc-cli' });
  grant.addOIDCScope(scope);
  grant.addResourceScope(audience, scope);
  const grantId = await grant.save();
  const token = new provider.AccessToken({
    accountId: String(userId),
    client: client!,
    grantId,
    scope,
    expiresIn: ttlSeconds,
    resourceServer: { audience, scope, accessTokenFormat: 'opaque', accessTokenTTL: ttlSeconds },
  } as never);
  return token.save();
}
