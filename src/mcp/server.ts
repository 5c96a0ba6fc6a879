// The MCP side of the endpoint, on the official TypeScript SDK v2: `createMcpHandler` serves the
// current protocol revision (2026-07-28, stateless, per request), and the 2025 revisions' traffic
// (`isLegacyRequest`) goes to their stateless Streamable HTTP transport. Both answer JSON, never an
// SSE stream (nothing here sends progress or notifications). The SDK's own legacy fallback would
// answer that traffic with a one-event SSE stream, so the legacy leg is composed here, as the SDK
// documents for a strict modern handler (`legacy: 'reject'`), with `enableJsonResponse`.
// `@modelcontextprotocol/node`'s toNodeHandler runs the whole on the Fastify route's raw request
// and response. Each request gets a fresh low-level
// `Server` whose handlers close over the caller's identity: tools/list shows the tools its scopes
// allow, tools/call runs the tool's API route (tool-calls.ts), and the one resource is the API
// documentation (api-docs.ts). The SDK is loaded with the first MCP request (it is a quarter of a
// second of module loading that a process serving only the API never needs).
import type { LegacyHttpHandler, McpHandlerRequestOptions, McpServerFactory, Tool } from '@modelcontextprotocol/server';
import type { NodeMcpRequestHandler } from '@modelcontextprotocol/node';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app-context.ts';
import { holdsAnyScope } from '../http/identity.ts';
import { API_DOCS_URI, apiDocument } from './api-docs.ts';
import { buildCatalog, type CatalogTool, type OpenApiDocument } from './catalog.ts';
import type { InternalCredentials } from './internal-credentials.ts';
import { ToolRunner, type CallContext } from './tool-calls.ts';

export interface McpService {
  /** Serves one HTTP exchange; `req.auth.extra.call` carries the caller (routes.ts). */
  handle: NodeMcpRequestHandler;
  /** Every tool this app serves, by name (tools/list shows those the caller's scopes allow). */
  tools: ReadonlyMap<string, CatalogTool>;
}

const INSTRUCTIONS =
  'Tools of this service act for the signed-in user through its REST API: read the profile and teams, and, ' +
  'with the write scopes, manage teams, members, invitations and webhooks. Read the resource docs://api for ' +
  "what each tool does, its arguments and the scope it needs. Errors are the API's problem details.";

/** Builds the handler for `app` (after it is ready: the OpenAPI document is complete then). */
export async function createMcpService(
  app: FastifyInstance,
  ctx: AppContext,
  credentials: InternalCredentials,
): Promise<McpService> {
  const [sdk, { toNodeHandler }] = await Promise.all([
    import('@modelcontextprotocol/server'),
    import('@modelcontextprotocol/node'),
  ]);
  const {
    Server,
    ProtocolError,
    ProtocolErrorCode,
    ResourceNotFoundError,
    WebStandardStreamableHTTPServerTransport,
    createMcpHandler,
    isLegacyRequest,
  } = sdk;
  if (!app.openApiDocument) throw new Error('the OpenAPI document is not recorded (registerOpenApi before the MCP)');
  const document = (await app.openApiDocument()) as OpenApiDocument & { info?: { description?: string } };
  const catalog = buildCatalog(document, { webhooksEnabled: ctx.config.webhooksEnabled });
  const tools = new Map(catalog.map((tool) => [tool.definition.name, tool]));
  const runner = new ToolRunner(app, credentials);
  const docsText = apiDocument(catalog, document.info?.description ?? '');
  const docsResource = {
    uri: API_DOCS_URI,
    name: 'api',
    title: 'Service API documentation',
    description: 'What each tool does, its arguments and the scope it needs',
    mimeType: 'text/markdown',
  };

  const factory: McpServerFactory = ({ authInfo }) => {
    const call = authInfo?.extra?.call as CallContext | undefined;
    const server = new Server(
      { name: 'svc', title: 'Service API', version: '1.0.0' },
      { capabilities: { tools: { listChanged: false }, resources: {} }, instructions: INSTRUCTIONS },
    );
    server.setRequestHandler('tools/list', () => ({
      // The definitions are plain JSON Schema objects, which the SDK types as JSON values.
      tools: (call
        ? catalog.filter((tool) => holdsAnyScope(call.identity, tool.scopes)).map((tool) => tool.definition)
        : []) as unknown as Tool[],
    }));
    server.setRequestHandler('tools/call', async (request) => {
      const tool = tools.get(request.params.name);
      if (!tool || !call)
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
      return runner.call(tool, request.params.arguments, call);
    });
    server.setRequestHandler('resources/list', () => ({ resources: [docsResource] }));
    server.setRequestHandler('resources/read', (request) => {
      if (request.params.uri !== API_DOCS_URI) throw new ResourceNotFoundError(request.params.uri);
      return { contents: [{ uri: API_DOCS_URI, mimeType: 'text/markdown', text: docsText }] };
    });
    return server;
  };

  // Rejected requests are answered by the SDK itself; their reasons are for debugging.
  const onerror = (error: Error) => app.log.debug({ err: error }, 'mcp request rejected');
  // 'auto' answers JSON unless a handler sends a message before its result, which none does here.
  const modern = createMcpHandler(factory, { legacy: 'reject', responseMode: 'auto', onerror });
  const legacy: LegacyHttpHandler = async (request, options) => {
    const server = await factory({
      era: 'legacy',
      ...(options?.authInfo ? { authInfo: options.authInfo } : {}),
      requestInfo: request,
    });
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    transport.onerror = onerror;
    // Not closed afterwards: a JSON answer leaves nothing open (no stream, no request of the server's
    // own), and closing builds an error object with its stack for the requests it would abandon.
    await server.connect(transport);
    return transport.handleRequest(request, options);
  };
  const handler = {
    fetch: async (request: Request, options?: McpHandlerRequestOptions) =>
      (await isLegacyRequest(request, options?.parsedBody)) ? legacy(request, options) : modern.fetch(request, options),
  };
  const handle = toNodeHandler(handler, { onerror: (error) => app.log.error({ err: error }, 'mcp handler failed') });
  return { handle, tools };
}
