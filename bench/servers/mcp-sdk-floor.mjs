// The MCP baseline: what the SDK's HTTP handling alone costs per tool call. A bare node:http
// server with the same SDK composition as src/mcp/server.ts (createMcpHandler for the 2026-07-28
// revision, the stateless Streamable HTTP transport with JSON answers for 2025 traffic, both under
// @modelcontextprotocol/node's toNodeHandler, the body parsed before as Fastify does), whose one
// tool answers a constant profile at once: no authentication, database, route or app. Measured in
// the same rounds as the service (bench/scenarios/mcp.ts), its throughput ÷ REST /me is the
// ceiling of any MCP endpoint built on this handler on the same machine. Prints "listening <port>".
import http from 'node:http';
import {
  Server,
  WebStandardStreamableHTTPServerTransport,
  createMcpHandler,
  isLegacyRequest,
} from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';

const profile = {
  id: 1,
  email: 'bench-user-0000@example.com',
  first_name: 'Bench',
  last_name: 'User0000',
  display_name: 'Bench User 0000',
};
const result = { content: [{ type: 'text', text: JSON.stringify(profile) }], structuredContent: profile };
const factory = () => {
  const server = new Server({ name: 'floor', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler('tools/call', () => result);
  return server;
};
const modern = createMcpHandler(factory, { legacy: 'reject', responseMode: 'auto' });
const legacy = async (request, options) => {
  const server = factory();
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  await server.connect(transport);
  return transport.handleRequest(request, options);
};
const handle = toNodeHandler({
  fetch: async (request, options) =>
    (await isLegacyRequest(request, options?.parsedBody)) ? legacy(request, options) : modern.fetch(request, options),
});

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    let body;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      res.writeHead(400).end();
      return;
    }
    handle(req, res, body).catch(() => res.writeHead(500).end());
  });
});
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  process.stdout.write(`listening ${server.address().port}\n`);
});
