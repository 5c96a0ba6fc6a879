// Metrics in the HTTP app (SERVICE_METRICS_TOKEN set): the request-duration histogram and GET /metrics.
//
// Each route gets its own onResponse hook, made when the route is registered, that holds the route's
// template and its series (route-durations.ts): recording a request reads its method, status and
// elapsed time and allocates nothing (request.routeOptions would build an object per request). The
// one app-wide hook records only what no route took (request.is404: a 404 or 405, or an OAuth path the
// mount answered before routing, under the template the mount named).
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction, onResponseHookHandler } from 'fastify';
import type { AppContext, TypedApp } from '../app-context.ts';
import { sendProblem } from '../http/errors.ts';
import { enableMetrics } from './metrics.ts';
import { METRICS_CHALLENGE, METRICS_REFUSED, MetricsToken } from './token.ts';

const asList = <T>(hook: T | T[] | undefined): T[] => (hook === undefined ? [] : Array.isArray(hook) ? hook : [hook]);

/** Called by buildApp before any route is registered, so that every route's hook is in place. */
export function installMetrics(app: TypedApp, ctx: AppContext): void {
  const metrics = enableMetrics(ctx);
  const token = new MetricsToken(ctx.config.metrics.token!);
  app.addHook('onRoute', (route) => {
    const series = metrics.routeDurations(route.url);
    const record = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
      series.observe(request.method, reply.statusCode, reply.elapsedTime / 1000);
      done();
    };
    route.onResponse = [...asList(route.onResponse), record as onResponseHookHandler];
  });
  app.addHook('onResponse', (request, reply, done) => {
    if (request.is404) metrics.observeUnrouted(request, request.method, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    if (!token.accepts(request.headers.authorization)) {
      return sendProblem(reply, 401, METRICS_REFUSED, { headers: { 'WWW-Authenticate': METRICS_CHALLENGE } });
    }
    const { body, contentType } = await metrics.exposition();
    return reply.header('Cache-Control', 'no-store').type(contentType).send(body);
  });
}
