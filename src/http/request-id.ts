// X-Request-ID: a valid client value is echoed, anything else is replaced by a new UUID.
// Fastify's genReqId makes it `request.id`, which pino puts on every log line of the request.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const CLIENT_REQUEST_ID = /^[A-Za-z0-9_-]{1,128}$/;

export function requestIdFor(raw: IncomingMessage): string {
  const header = raw.headers['x-request-id'];
  return typeof header === 'string' && CLIENT_REQUEST_ID.test(header) ? header : randomUUID();
}
