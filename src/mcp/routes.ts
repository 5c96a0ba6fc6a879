// The remote MCP endpoint: POST /mcp (and /mcp/), Streamable HTTP, stateless, JSON answers; any
// other method is 405 (the app's not-found handler, as for every known path). With
// SERVICE_MCP_ENABLED off none of this exists: /mcp and its metadata document are 404.
//
// Before any MCP message is read (an onRequest hook, in this order): the Host/Origin check (403),
// then for a POST the bearer token, for the resource BASE_URL/mcp only (an API token, a JWT or a
// browser session is no credential here), the per-user rate limit with its headers (as on the API,
// and counted once per MCP request), the 401 challenge and the JSON media type (415). The body limit
// is the app's. The route then refuses a tool call whose scope the token lacks with the 403 step-up
// challenge, before the tool runs, and hands the exchange to the SDK (server.ts).
import type { AuthInfo } from '@modelcontextprotocol/server';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext, TypedApp } from '../app-context.ts';
import {
  holdsAnyScope,
  isAuthenticated,
  missingScopeDetail,
  requireUser,
  type AuthenticatedIdentity,
} from '../http/identity.ts';
import { HttpProblem } from '../http/problem.ts';
import { throttleRequest } from '../http/throttle-hook.ts';
import { MCP_PATH, mcpResourceOf } from '../oauth/constants.ts';
import { Challenges, RequestGuard, STARTING_SCOPES } from './guards.ts';
import { InternalCredentials } from './internal-credentials.ts';
import { createMcpService, type McpService } from './server.ts';
import type { CatalogTool } from './catalog.ts';

export const isMcpPath = (url: string) =>
  url.startsWith(MCP_PATH) &&
  (url.length === MCP_PATH.length || url[MCP_PATH.length] === '/' || url[MCP_PATH.length] === '?');

// The request headers the SDK's transports read: media types, the protocol's own headers, Host and
// Origin (checked here already, and again by the SDK's optional DNS-rebinding check).
const SDK_HEADERS = [
  'host',
  'origin',
  'content-type',
  'accept',
  'mcp-protocol-version',
  'mcp-method',
  'mcp-name',
  'mcp-session-id',
  'last-event-id',
];
// The body was read and parsed by Fastify; the SDK is given it parsed and never reads the stream.
async function* noBody(): AsyncGenerator<never> {}

const isJson = (type: string | undefined) => type !== undefined && /^application\/json\s*(;|$)/i.test(type);

export function registerMcp(app: TypedApp, ctx: AppContext) {
  const { config } = ctx;
  const resource = mcpResourceOf(config);
  if (!resource) return;
  const metadataUrl = `${config.baseUrl}/.well-known/oauth-protected-resource${MCP_PATH}`;
  const guard = new RequestGuard(config.baseUrl);
  const challenges = new Challenges(metadataUrl);
  const credentials = new InternalCredentials();
  ctx.authenticator.addBearer(credentials);

  // Built on the first MCP request (the SDK is loaded then), once the app is ready; a failed build
  // is tried again by the next request.
  let service: Promise<McpService> | null = null;
  const load = () =>
    (service ??= createMcpService(app, ctx, credentials).catch((error: unknown) => {
      service = null;
      throw error;
    }));

  app.addHook('onRequest', (request, reply, done) => {
    if (!isMcpPath(request.url)) return done();
    const refusal = guard.refusal(request.headers.host, request.headers.origin);
    if (refusal) return done(new HttpProblem(403, refusal));
    if (request.method !== 'POST') return done();
    const counted = (error?: Error) => {
      if (error) return done(error);
      const identity = request.identity;
      if (!isAuthenticated(identity)) {
        const detail = identity.credentialError ?? 'Authentication credentials were not provided.';
        return done(
          new HttpProblem(401, detail, { headers: { 'WWW-Authenticate': challenges.unauthorized(identity) } }),
        );
      }
      if (!isJson(request.headers['content-type']))
        return done(new HttpProblem(415, 'Unsupported media type; send application/json.'));
      done();
    };
    const count = () => throttleRequest(ctx.throttle, ctx.clientAddresses, request, reply, counted);
    const authenticating = ctx.authenticator.authenticateBearer(request, resource);
    if (!authenticating) return count();
    authenticating.then(() => {
      try {
        count();
      } catch (error) {
        done(error as Error);
      }
    }, done);
  });

  const serve = async (request: FastifyRequest, reply: FastifyReply) => {
    const identity = requireUser(request);
    const { handle, tools } = await load();
    const lacking = toolLackingScope(request.body, tools, identity);
    if (lacking) {
      throw new HttpProblem(403, missingScopeDetail(lacking.scopes), {
        headers: { 'WWW-Authenticate': challenges.insufficientScope(identity, lacking.scopes[0]) },
      });
    }
    // What the SDK reads of the request (toNodeHandler takes any request of this shape): the headers
    // of the transport protocol only (the credential was checked here; copying every header into a
    // web Request is a noticeable share of a tool call), the parsed body, and `auth`, which it hands
    // to the server factory as its authInfo.
    const headers: Record<string, string | string[] | undefined> = {};
    for (const name of SDK_HEADERS) if (request.headers[name] !== undefined) headers[name] = request.headers[name];
    const raw = {
      method: 'POST',
      url: request.url,
      headers,
      [Symbol.asyncIterator]: noBody,
      auth: {
        token: '',
        clientId: identity.credentialId,
        scopes: identity.scopes ? [...identity.scopes] : [],
        extra: { call: { identity, requestId: request.id, address: ctx.clientAddresses.of(request.raw) } },
      } satisfies AuthInfo,
    };
    // The SDK writes the answer on the raw response: the headers set so far (X-Request-ID, the
    // rate-limit fields) go with it. Fastify still writes the request's log line when it is sent.
    for (const [name, value] of Object.entries(reply.getHeaders()))
      if (value !== undefined) reply.raw.setHeader(name, value);
    reply.hijack();
    await handle(raw, reply.raw, request.body);
  };
  app.post(MCP_PATH, { schema: { hide: true } }, serve);
  app.post(`${MCP_PATH}/`, { schema: { hide: true } }, serve);

  // RFC 9728 metadata of the MCP endpoint, at the path-aware well-known location its 401 names.
  app.get(`/.well-known/oauth-protected-resource${MCP_PATH}`, { schema: { hide: true } }, async (_request, reply) => {
    reply.header('Cache-Control', 'public, max-age=3600');
    return {
      resource,
      authorization_servers: [config.baseUrl],
      scopes_supported: STARTING_SCOPES,
      bearer_methods_supported: ['header'],
      resource_name: 'Service API (MCP)',
      resource_documentation: `${config.baseUrl}/api/docs/`,
    };
  });
}

/** The first tools/call (of a message or a batch) for a known tool whose scopes the identity holds none of. */
function toolLackingScope(
  body: unknown,
  tools: ReadonlyMap<string, CatalogTool>,
  identity: AuthenticatedIdentity,
): CatalogTool | null {
  if (identity.scopes === null) return null;
  for (const message of Array.isArray(body) ? body : [body]) {
    const { method, params } = (message ?? {}) as { method?: unknown; params?: { name?: unknown } };
    if (method !== 'tools/call' || typeof params?.name !== 'string') continue;
    const tool = tools.get(params.name);
    if (tool && !holdsAnyScope(identity, tool.scopes)) return tool;
  }
  return null;
}
