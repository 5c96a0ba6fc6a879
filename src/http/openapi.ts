// The OpenAPI 3.0 document, generated from the route schemas, at /api/schema/, and an interactive
// browser at /api/docs/. Both can be turned off with SERVICE_API_DOCS_PUBLIC=false (the production
// default); then neither plugin is loaded at all (docs/architecture.md, "Lazy loading").
import type { AppContext, TypedApp } from '../app-context.ts';

export async function registerOpenApi(app: TypedApp, { config, scopes }: AppContext) {
  if (!config.apiDocsPublic) return;
  const [{ default: swagger }, { default: swaggerUi }] = await Promise.all([import('@fastify/swagger'), import('@fastify/swagger-ui')]);
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Service API',
        version: 'v1',
        description:
          'Multi-tenant REST API. Every path ends with "/". Errors are RFC 9457 problem details. ' +
          'Authenticate with "Authorization: Bearer <token>" (personal access token, OAuth 2.0 access token or JWT).',
      },
      servers: [{ url: config.baseUrl }],
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            description: `Scopes: ${scopes.list().map((s) => `${s.name} (${s.description})`).join('; ')}`,
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
  });
  app.get('/api/schema/', { schema: { hide: true } }, async () => app.swagger());
  await app.register(swaggerUi, { routePrefix: '/api/docs', staticCSP: true });
}
