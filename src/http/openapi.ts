// The OpenAPI 3.0 document, generated from the route schemas, at /api/schema/, and an interactive
// browser at /api/docs/. Both can be turned off with SERVICE_API_DOCS_PUBLIC=false (the production
// default). The document is still generated when the MCP endpoint is on (its tools are made from
// it, mcp/catalog.ts), only not served, and then built on first use (openapi-replay.ts); with both
// off nothing of it is loaded at all (docs/architecture.md, "Lazy loading").
import type { SwaggerOptions } from '@fastify/swagger';
import type { AppContext, TypedApp } from '../app-context.ts';
import { recordForOpenApi } from './openapi-replay.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** The OpenAPI document of the app's routes, once the app is ready (absent when neither docs nor MCP are on). */
    openApiDocument?: () => Promise<unknown>;
  }
}

/** The security schemes of the document: OAuth 2.0 access tokens, and bearer PATs and JWTs. */
export const OAUTH2_SCHEME = 'oauth2';
export const BEARER_SCHEME = 'bearerAuth';

/**
 * The `security` of an operation that needs any one of `scopes`. The objects of an OpenAPI
 * security list are alternatives and the schemes named in one object are all required at once, so
 * each accepted scope is an object of its own. A bearer scheme cannot name scopes (OpenAPI 3.0: its
 * list must be empty), so PATs and JWTs are one more alternative, and the scheme's description says
 * that they carry the same scopes.
 */
export function securityRequirements(scopes: readonly string[]): Record<string, string[]>[] {
  return [...scopes.map((scope) => ({ [OAUTH2_SCHEME]: [scope] })), { [BEARER_SCHEME]: [] }];
}

/** Where the OAuth authorization server answers (the oauth capability's paths; http/ knows no feature). */
export interface OAuthEndpoints {
  authorization: string;
  token: string;
  device_authorization: string;
}

export async function registerOpenApi(app: TypedApp, ctx: AppContext, oauth: OAuthEndpoints) {
  const { config } = ctx;
  if (!config.apiDocsPublic && !config.mcpEnabled) return;
  const options = swaggerOptions(ctx, oauth);
  if (!config.apiDocsPublic) {
    app.decorate('openApiDocument', recordForOpenApi(app, options));
    return;
  }
  const { default: swagger } = await import('@fastify/swagger');
  await app.register(swagger, options);
  app.decorate('openApiDocument', async () => app.swagger());
  app.get('/api/schema/', { schema: { hide: true } }, async () => app.swagger());
  const { default: swaggerUi } = await import('@fastify/swagger-ui');
  await app.register(swaggerUi, { routePrefix: '/api/docs', staticCSP: true });
}

function swaggerOptions({ config, scopes }: AppContext, oauth: OAuthEndpoints): SwaggerOptions {
  const emptyPatScopes = config.patEmptyScopesFullAccess
    ? "a PAT created with no scopes has the user's full access"
    : 'a PAT created with no scopes has no access';
  return {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Service API',
        version: 'v1',
        description:
          'Multi-tenant REST API. Every path ends with "/". Errors are RFC 9457 problem details. ' +
          'Authenticate with "Authorization: Bearer <token>": an OAuth 2.0 access token (scheme oauth2), or a personal ' +
          'access token or JWT (scheme bearerAuth). An operation lists each scope it accepts as an alternative of its own; ' +
          'any one of them suffices.\n\n' +
          // Literal paths: http/ imports no layer above it; test/events/catalog.test.ts follows these links.
          `Webhooks: the event catalog is [${config.baseUrl}/api/v1/event-types/](${config.baseUrl}/api/v1/event-types/) ` +
          `(operation list_event_types), and the deliveries, one per event type, are the OpenAPI 3.1 document ` +
          `[${config.baseUrl}/api/schema/webhooks/](${config.baseUrl}/api/schema/webhooks/).`,
      },
      servers: [{ url: config.baseUrl }],
      components: {
        securitySchemes: {
          [OAUTH2_SCHEME]: {
            type: 'oauth2',
            description:
              "Access tokens from this service's OAuth 2.0 authorization server (PKCE S256 required; metadata at " +
              `${config.baseUrl}/.well-known/oauth-authorization-server). The device authorization grant (RFC 8628) is offered ` +
              `too, at ${config.baseUrl}${oauth.device_authorization} with the same token endpoint and scopes; ` +
              'OpenAPI 3.0 has no flow to declare it.',
            flows: {
              authorizationCode: {
                authorizationUrl: `${config.baseUrl}${oauth.authorization}`,
                tokenUrl: `${config.baseUrl}${oauth.token}`,
                refreshUrl: `${config.baseUrl}${oauth.token}`,
                scopes: Object.fromEntries(scopes.list().map((scope) => [scope.name, scope.description])),
              },
            },
          },
          [BEARER_SCHEME]: {
            type: 'http',
            scheme: 'bearer',
            description:
              'A personal access token (svc_…, made on /accounts/tokens/ or with the CLI) or a JWT from POST /api/auth/token/. ' +
              'They carry the scopes of the oauth2 scheme, which OpenAPI cannot state for a bearer scheme: an operation ' +
              `accepts one that holds any of the scopes its oauth2 alternatives name (${emptyPatScopes}).`,
          },
        },
      },
    },
    // The document describes the JSON API. Browser pages (/accounts/…, HTML forms) are left out
    // unless a route opts in with an operationId of its own.
    transform: ({ schema, url }) => {
      const documented = url.startsWith('/api/') || (schema as { operationId?: string } | undefined)?.operationId;
      return { schema: documented ? schema : ({ ...schema, hide: true } as typeof schema), url };
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
  };
}
