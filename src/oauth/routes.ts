// Wires the authorization server into the app: the provider (provider.ts) mounted on its /o/ and
// discovery paths (mount.ts), the interaction pages, OAuth access tokens accepted on the API, and
// the RFC 9728 protected resource metadata that the API's 401 answers point to.
import type { AppContext, TypedApp } from '../app-context.ts';
import { OAuthBearerResolver } from './bearer.ts';
import { refusedClientIds } from './first-party.ts';
import { registerInteractionPages } from './interactions.ts';
import { installOAuthMount } from './mount.ts';

export async function registerOAuth(app: TypedApp, ctx: AppContext): Promise<void> {
  const server = ctx.oauth;
  // The library answers 500 itself; the cause goes to the service's log.
  server.onBuilt((built) =>
    built.provider.on('server_error', (_koa: unknown, error: Error) =>
      app.log.error({ err: error }, 'oauth server error'),
    ),
  );
  ctx.authenticator.addBearer(
    new OAuthBearerResolver(async () => (await server.get()).provider, ctx.db.kysely, refusedClientIds(ctx.config)),
  );
  installOAuthMount(app, ctx, server);
  registerInteractionPages(app, ctx, server);

  // RFC 9728: where MCP-style clients learn which authorization server protects the API, and its scopes.
  app.get('/.well-known/oauth-protected-resource', { schema: { hide: true } }, async (_request, reply) => {
    reply.header('Cache-Control', 'public, max-age=3600');
    return {
      resource: server.resource,
      authorization_servers: [ctx.config.baseUrl],
      scopes_supported: ctx.scopes.names(),
      bearer_methods_supported: ['header'],
      resource_documentation: `${ctx.config.baseUrl}/api/docs/`,
    };
  });
}
