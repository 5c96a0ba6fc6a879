// HEAD is answered by the path's GET route, as RFC 9110 defines it: the GET response without its
// content. Fastify's own way (`exposeHeadRoutes`) registers a second route for every GET, with its
// own route context and a second router tree: with ~50 GET routes that cost 3.5 MiB and ~15 ms of
// every start (docs/performance.md, "Startup and RSS"). Instead a HEAD request is routed as a GET,
// and node:http, which decided when it made the response that a HEAD response has no body, drops
// whatever the handler writes; Fastify still sets Content-Length from the GET's payload. The method
// is HEAD again before the first hook runs (restoreHead), so handlers, the request log, the metrics
// and a 405's Allow header see the method the client sent.
import type { IncomingMessage } from 'node:http';

const ROUTED_AS_GET = Symbol('svc.headRoutedAsGet');
type Raw = IncomingMessage & { [ROUTED_AS_GET]?: true };

/** Fastify's `rewriteUrl`: runs on every request before routing; changes the method only. */
export function routeHeadAsGet(raw: IncomingMessage): string {
  if (raw.method === 'HEAD') {
    raw.method = 'GET';
    (raw as Raw)[ROUTED_AS_GET] = true;
  }
  return raw.url as string;
}

/** After routing, before anything reads the method: a HEAD request routed as a GET is a HEAD again. */
export function restoreHead(raw: IncomingMessage): void {
  if ((raw as Raw)[ROUTED_AS_GET] === true) raw.method = 'HEAD';
}
