// buildApp: registers the cross-cutting HTTP behaviour and the feature routes. No business logic.
import Fastify, { type FastifyError, type FastifyReply, type FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext, TypedApp } from './app-context.ts';
import { registerMeRoutes } from './accounts/me-routes.ts';
import { registerDashboard } from './dashboard/routes.ts';
import { registerAccountPages } from './accounts/routes.ts';
import { registerAuditPage } from './audit/page.ts';
import { registerAuditRoutes } from './audit/routes.ts';
import { installAuthentication } from './http/auth.ts';
import { ANONYMOUS } from './http/identity.ts';
import { handleClientError, handleError, handleFrameworkError, installErrorHandling } from './http/errors.ts';
import { restoreHead, routeHeadAsGet } from './http/head-requests.ts';
import { registerHealthRoutes } from './http/health.ts';
import { registerOpenApi } from './http/openapi.ts';
import { requestIdFor } from './http/request-id.ts';
import { OneLinePerRequest, requestChildLogger } from './http/request-log.ts';
import { installRefusedBodyClose, isClosingConnection } from './http/refused-body.ts';
import { throttleRequest } from './http/throttle-hook.ts';
import { installIdempotency } from './http/idempotency.ts';
import { lazyCompilers } from './http/lazy-compilers.ts';
import { Problem } from './http/schemas.ts';
import { requestLogger } from './util/logger.ts';
import { registerSuppressionAdminRoutes } from './mail/admin-routes.ts';
import { registerMailproviderIntake } from './mail/intake.ts';
import { registerMcp } from './mcp/routes.ts';
import { OAUTH_ROUTES } from './oauth/constants.ts';
import { registerApplicationsPage } from './oauth/pages-applications.ts';
import { registerOAuth } from './oauth/routes.ts';
import { registerProductRoutes } from './products/routes.ts';
import { memberTeam } from './teams/page-access.ts';
import { registerTeamPages } from './teams/pages-routes.ts';
import { registerTeamRoutes } from './teams/routes.ts';
import { teamForMember } from './teams/teams.ts';
import { registerEventCatalogRoutes } from './webhooks/catalog-routes.ts';
import { registerWebhookPages } from './webhooks/pages-routes.ts';
import { registerWebhookRoutes } from './webhooks/routes.ts';
import { registerWebhooksDocument } from './webhooks/schema-document.ts';
import { PatResolver } from './tokens/pat-resolver.ts';
import { registerTokenRoutes } from './tokens/routes.ts';
import { installWeb, isPagePath } from './web/install.ts';

export const isApiPath = (url: string) => url.startsWith('/api/');

export async function buildApp(ctx: AppContext): Promise<TypedApp> {
  const { config } = ctx;
  // Each route's validators and serialisers are compiled on its first request (lazy-compilers.ts).
  // Query strings, path parameters and headers arrive as text and are coerced to their schema's
  // types (`ajv` below); a request body is taken as written, so a JSON value of the wrong type is a
  // 400 naming the field instead of a guess that hides a client's bug. Form bodies (the credential
  // exchanges) hold strings only, which is what their schemas declare.
  const compilers = lazyCompilers({ bodyAjvOptions: { coerceTypes: false } });
  const app = Fastify({
    loggerInstance: requestLogger(config),
    logController: new OneLinePerRequest(),
    childLoggerFactory: requestChildLogger,
    genReqId: requestIdFor,
    bodyLimit: config.bodyLimitBytes,
    trustProxy: false,
    // HEAD is served by the GET route (http/head-requests.ts), not by a second route per GET.
    exposeHeadRoutes: false,
    rewriteUrl: routeHeadAsGet,
    // Errors raised before routing (bad percent-encoding, an over-long path parameter) get the
    // problem shape and the request id too, and under /api/ are counted and carry X-RateLimit-*.
    frameworkErrors: (error, request, reply) => {
      restoreHead(request.raw);
      if (!isApiPath(request.url)) {
        request.identity = ANONYMOUS;
        void handleFrameworkError(error, request, reply);
        return;
      }
      apiHook(request, reply, (refused?: Error) => {
        void (refused
          ? handleError(refused as FastifyError, request, reply)
          : handleFrameworkError(error, request, reply));
      });
    },
    clientErrorHandler: handleClientError,
    ajv: { customOptions: { removeAdditional: false, coerceTypes: 'array', useDefaults: true } },
    schemaController: { compilersFactory: compilers.compilersFactory },
  }).withTypeProvider<TypeBoxTypeProvider>();
  compilers.attach(app);
  // Prometheus metrics, when SERVICE_METRICS_TOKEN is set: first, so that its onRoute hook sees every
  // route. The module (and the client library) is loaded only then.
  if (config.metrics.token !== null) (await import('./metrics/http.ts')).installMetrics(app, ctx);

  installErrorHandling(app);
  installRefusedBodyClose(app);
  installAuthentication(app, ctx.authenticator);
  // After installAuthentication: its scope check must come before the idempotency reservation.
  installIdempotency(app, { db: ctx.db.kysely, ttlHours: config.idempotencyTtlHours });
  const pats = new PatResolver(ctx.db.kysely, config.patEmptyScopesFullAccess);
  ctx.authenticator.addBearer(pats);

  // Callback style, so that a request with a cached PAT in memory mode passes without a promise.
  const apiHook = (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
    // After authentication: the identity picks the bucket (user, or the anonymous address).
    const count = () => throttleRequest(ctx.throttle, ctx.clientAddresses, request, reply, done);
    const authenticating = ctx.authenticator.authenticate(request);
    if (!authenticating) return count();
    authenticating.then(() => {
      try {
        count();
      } catch (error) {
        done(error as Error);
      }
    }, done);
  };
  // The one hook that sets request.identity, first of all onRequest hooks (and the one that makes a
  // HEAD request routed as a GET a HEAD again, before anything reads its method): the API authenticates
  // (then counts the request), pages look at the session cookie, anything else is anonymous (a
  // browser's cookie costs machine endpoints, static files and health checks no session query).
  app.addHook('onRequest', (request, reply, done) => {
    restoreHead(request.raw);
    // A request pipelined behind a refused body, on a connection that is closing, is never run.
    if (isClosingConnection(request.raw)) {
      reply.hijack();
      return done();
    }
    reply.header('X-Request-ID', request.id);
    const url = request.url;
    if (isApiPath(url)) return apiHook(request, reply, done);
    if (!isPagePath(url)) {
      request.identity = ANONYMOUS;
      return done();
    }
    const loading = ctx.authenticator.authenticatePage(request);
    if (!loading) return done();
    loading.then(() => done(), done);
  });
  // Redis (when configured) is connected before the first request and closed with the app.
  app.addHook('onReady', () => ctx.throttle.connect(app.log));
  app.addHook('onClose', () => ctx.throttle.close());
  // Tokens' last_used_at waiting for their batch are written while the database is still open.
  app.addHook('onClose', () => pats.close());
  // Browser pages: cookies, form bodies, the stylesheet, the CSRF seed and notices.
  await installWeb(app, ctx);
  // OAuth 2.0 server (after installWeb: its /o/ pages need the cookies and page state).
  await registerOAuth(app, ctx);

  app.addSchema(Problem);
  await registerOpenApi(app, ctx, OAUTH_ROUTES);
  registerHealthRoutes(app, ctx);
  registerMeRoutes(app, ctx);
  registerTeamRoutes(app, ctx);
  registerAuditRoutes(app, ctx, teamForMember);
  registerProductRoutes(app, ctx);
  registerWebhookRoutes(app, ctx);
  registerEventCatalogRoutes(app, ctx);
  registerWebhooksDocument(app, ctx);
  await registerAccountPages(app, ctx);
  await registerTokenRoutes(app, ctx);
  await registerDashboard(app, ctx, [
    registerTeamPages,
    (pages) => registerAuditPage(pages, ctx, memberTeam),
    registerWebhookPages,
    registerApplicationsPage,
  ]);
  await registerMailproviderIntake(app, ctx);
  registerSuppressionAdminRoutes(app, ctx);
  // The MCP endpoint (after every API route: its tools are made from their OpenAPI operations).
  registerMcp(app, ctx);
  return app;
}
