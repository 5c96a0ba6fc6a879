// `svc worker`'s own metrics endpoint (SERVICE_WORKER_METRICS_PORT): GET /metrics on HOST:port with
// the same bearer token and answers as the HTTP app's. A worker serves no other HTTP, so this is a bare
// node:http server, not a Fastify app: anything else is a 404 (or a 405) problem.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AppContext } from '../app-context.ts';
import { enableMetrics } from './metrics.ts';
import { METRICS_CHALLENGE, METRICS_REFUSED, MetricsToken } from './token.ts';

export interface MetricsServer {
  /** The URL of its /metrics (with the port bound, when the setting was 0). */
  url: string;
  close(): Promise<void>;
}

function problem(
  response: http.ServerResponse,
  status: number,
  detail: string,
  headers: Record<string, string> = {},
): void {
  const body = JSON.stringify({ type: 'about:blank', title: http.STATUS_CODES[status], status, detail });
  response.writeHead(status, {
    'Content-Type': 'application/problem+json',
    'Content-Length': Buffer.byteLength(body),
    ...headers,
  });
  response.end(body);
}

export async function serveWorkerMetrics(ctx: AppContext): Promise<MetricsServer> {
  const { host, metrics: settings } = ctx.config;
  const metrics = enableMetrics(ctx);
  const token = new MetricsToken(settings.token!);
  const server = http.createServer((request, response) => {
    const path = (request.url ?? '').split('?', 1)[0];
    if (path !== '/metrics') return problem(response, 404, 'Not found.');
    if (request.method !== 'GET' && request.method !== 'HEAD')
      return problem(response, 405, `Method ${request.method} is not allowed on this path.`, { Allow: 'GET, HEAD' });
    if (!token.accepts(request.headers.authorization))
      return problem(response, 401, METRICS_REFUSED, { 'WWW-Authenticate': METRICS_CHALLENGE });
    metrics.exposition().then(
      ({ body, contentType }) => {
        response.writeHead(200, {
          'Content-Type': contentType,
          'Content-Length': Buffer.byteLength(body),
          'Cache-Control': 'no-store',
        });
        response.end(request.method === 'HEAD' ? undefined : body);
      },
      () => problem(response, 500, 'The metrics could not be collected.'),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(settings.workerPort!, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
