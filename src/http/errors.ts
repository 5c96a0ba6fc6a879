// Turns every failure into a problem-details answer: thrown DomainErrors (through error-answers.ts),
// HttpProblems, Fastify's own errors (validation, malformed JSON, unsupported media type, oversized
// body), unknown paths, wrong methods.
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import { isDatabaseBusy } from '../db/busy.ts';
import { DomainError } from '../util/domain-errors.ts';
import { databaseBusy, problemOf, type ProblemAnswer } from './error-answers.ts';
import { HttpProblem, problemBody, type FieldError } from './problem.ts';

export function sendProblem(
  reply: FastifyReply,
  status: number,
  detail: string,
  options: { errors?: FieldError[]; headers?: Record<string, string>; extra?: Record<string, unknown> } = {},
) {
  if (options.headers) reply.headers(options.headers);
  return reply
    .code(status)
    .type('application/problem+json')
    .send(problemBody(status, detail, reply.request.id, options.errors, options.extra));
}

function validationErrors(error: FastifyError): FieldError[] {
  const context = error.validationContext ?? 'body';
  return (error.validation ?? []).map((issue) => {
    const missing = (issue.params as { missingProperty?: string })?.missingProperty;
    const extra = (issue.params as { additionalProperty?: string })?.additionalProperty;
    const pointer = issue.instancePath.replace(/^\//, '').replace(/\//g, '.');
    const field = [pointer, missing ?? extra].filter(Boolean).join('.') || context;
    const message = extra
      ? 'Unknown field.'
      : missing
        ? 'This field is required.'
        : (issue.message ?? 'Invalid value.');
    return { field, message };
  });
}

const FASTIFY_DETAILS: Record<string, string> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'Unsupported media type; send application/json.',
  FST_ERR_CTP_BODY_TOO_LARGE: 'Request body is too large.',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'Request body is empty but Content-Type is application/json.',
  FST_ERR_CTP_INVALID_JSON_BODY: 'Request body is not valid JSON.',
};

// The types a cross-site HTML form or a CORS "simple request" can send. Parsers exist for text and
// forms (Fastify's own, and @fastify/formbody for the pages), so API routes refuse them unless they
// declare the type in their schema's `consumes` (the credential exchanges take forms, as OAuth does).
const SIMPLE_REQUEST_TYPES = ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data'];

function mediaTypeOf(header: string): string {
  const end = header.indexOf(';');
  return (end === -1 ? header : header.slice(0, end)).trim().toLowerCase();
}

function refuseSimpleRequestTypes(declared: readonly string[]) {
  const refused = new Set(SIMPLE_REQUEST_TYPES.filter((type) => !declared.includes(type)));
  return (request: FastifyRequest, _reply: FastifyReply, _payload: unknown, done: (error?: Error) => void) => {
    const type = request.headers['content-type'];
    if (type && request.method !== 'GET' && request.method !== 'HEAD' && refused.has(mediaTypeOf(type))) {
      return done(new HttpProblem(415, FASTIFY_DETAILS.FST_ERR_CTP_INVALID_MEDIA_TYPE));
    }
    done();
  };
}

const sendAnswer = (reply: FastifyReply, answer: ProblemAnswer) =>
  sendProblem(reply, answer.status, answer.detail, answer);

export function handleError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  if (error instanceof DomainError) return sendAnswer(reply, problemOf(error));
  if (error instanceof HttpProblem) {
    return sendProblem(reply, error.status, error.detail, error);
  }
  if (error.validation) {
    return sendProblem(reply, 400, 'Request is invalid.', { errors: validationErrors(error) });
  }
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) {
    const detail =
      FASTIFY_DETAILS[error.code] ?? (error instanceof SyntaxError ? 'Request body is not valid JSON.' : error.message);
    return sendProblem(reply, status, detail);
  }
  // SQLite: another process held the write lock for longer than SERVICE_SQLITE_BUSY_TIMEOUT_MS.
  // Nothing of the request's change was written (its transaction never began, or its one statement
  // was refused), so a retry is safe.
  if (isDatabaseBusy(error)) {
    request.log.warn({ err: error }, 'database busy');
    return sendAnswer(reply, problemOf(databaseBusy()));
  }
  request.log.error({ err: error }, 'unhandled error');
  return sendProblem(reply, 500, 'Internal server error.');
}

/**
 * Errors Fastify raises before routing, where no hook has run (so X-Request-ID is set here).
 * An over-long path parameter (beyond maxParamLength, 100) can name no resource: 404, like any
 * other unknown id, rather than Fastify's bare 414.
 */
export function handleFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  reply.header('X-Request-ID', request.id);
  if (error.code === 'FST_ERR_BAD_URL')
    return sendProblem(reply, 400, 'The URL is malformed (invalid percent-encoding).');
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') return sendProblem(reply, 404, 'Not found.');
  request.log.error({ err: error }, 'framework error');
  return sendProblem(reply, 500, 'Internal server error.');
}

/**
 * Bytes that are not a parseable HTTP request (oversized headers, garbage, a timeout) never reach
 * Fastify's routing; Node hands the socket here. The answer is still a problem document with a
 * request id, written raw because there is no request object, and the connection is closed.
 */
export function handleClientError(error: Error & { code?: string }, socket: Duplex) {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, detail] =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'The request did not arrive in time.']
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'The request headers are too large.']
        : [400, 'The request is not valid HTTP.'];
  const requestId = randomUUID();
  const body = JSON.stringify(problemBody(status, detail, requestId));
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/problem+json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-ID: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}

/**
 * Installs the error and not-found handlers. A mirror of the route table (find-my-way, Fastify's
 * own router) tells an unknown path (404) from a known path with the wrong method (405 + Allow),
 * which Fastify alone reports as 404. The mirror is built on the first request that no route
 * matches, so a start does not build a second router of every route that most processes never use.
 */
export function installErrorHandling(app: FastifyInstance) {
  const routes: [HTTPMethod, string][] = [];
  let built: { router: ReturnType<typeof FindMyWay>; methods: HTTPMethod[] } | null = null;
  const mirror = () => {
    if (built) return built;
    const router = FindMyWay({ ignoreTrailingSlash: false });
    for (const [method, url] of routes) {
      try {
        router.on(method, url, () => {});
      } catch {
        // Already mirrored (a plugin registering the same path twice); nothing to add.
      }
    }
    built = { router, methods: [...new Set(routes.map(([method]) => method))] };
    return built;
  };
  app.addHook('onRoute', (route) => {
    const list = (Array.isArray(route.method) ? route.method : [route.method]) as HTTPMethod[];
    for (const method of list) routes.push([method, route.url]);
    // A GET route answers HEAD too (head-requests.ts), without a route of its own.
    if (list.includes('GET') && !list.includes('HEAD')) routes.push(['HEAD', route.url]);
  });
  // Fastify parses text/plain bodies out of the box, and the pages' form parser is app-wide. API
  // routes take JSON only: a text/plain or form POST is a CORS "simple request" that a browser sends
  // cross-site without a preflight, so accepting it would let any web page post to the API. Refused
  // before parsing, with the same 415 as any other unsupported type. (Routes outside /api/, such as
  // the pages and the mail-provider intake, may accept them.)
  // Attached to the API routes that take a body only, so GET requests run no hook for it.
  app.addHook('onRoute', (route) => {
    const list = Array.isArray(route.method) ? route.method : [route.method];
    if (!route.url.startsWith('/api/') || list.every((method) => method === 'GET' || method === 'HEAD')) return;
    const existing = route.preParsing ? (Array.isArray(route.preParsing) ? route.preParsing : [route.preParsing]) : [];
    const declared = (route.schema as { consumes?: string[] } | undefined)?.consumes ?? [];
    route.preParsing = [refuseSimpleRequestTypes(declared), ...existing];
  });
  app.setErrorHandler(handleError);
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0];
    const { router, methods } = mirror();
    const allowed = methods.filter((method) => method !== request.method && router.find(method, path));
    if (allowed.length > 0) {
      return sendProblem(reply, 405, `Method ${request.method} is not allowed on this path.`, {
        headers: { Allow: allowed.sort().join(', ') },
      });
    }
    return sendProblem(reply, 404, 'Not found.');
  });
}
