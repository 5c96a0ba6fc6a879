// Mounts oidc-provider in Fastify: an onRequest hook takes the paths the provider owns, stamps the
// raw response with X-Request-ID (and the rate-limit fields where a throttle applies), hijacks the reply and
// hands the raw request to provider.callback(); Fastify never reads those bodies. Everything the
// library leaves to the deployment happens here first, while a refusal can still be an ordinary
// Fastify answer: per-address throttling, the DCR body rules (registration.ts), device-code
// polling discipline (device-polling.ts), login before /o/device/, wrong-user-code lockout.
import { IncomingMessage, type ServerResponse } from 'node:http';
import querystring from 'node:querystring';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext, TypedApp } from '../app-context.ts';
import { redirectToLogin } from '../accounts/session-auth.ts';
import { hookForPaths } from '../http/path-hook.ts';
import { sendProblem } from '../http/errors.ts';
import { closeAfterAnswer } from '../http/refused-body.ts';
import { rateLimitHeaders, type RateResult } from '../http/throttle.ts';
import { throttledProblem } from '../http/throttle-hook.ts';
import { renderError } from '../web/render.ts';
import { DEVICE_GRANT, OAUTH_ROUTES, setAppUser } from './constants.ts';
import { checkDevicePoll } from './device-polling.ts';
import type { OAuthServer } from './provider.ts';
import { stashPage } from './html.ts';
import type { LazyOAuthServer } from './lazy-server.ts';
import { RegistrationError, normaliseClientMetadata } from './registration.ts';
import { userCodeEntryBlocked } from './user-code-throttle.ts';

const WELL_KNOWN = ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration'];
// The library's own body limit; larger OAuth requests are refused before it reads them.
const BODY_LIMIT = 56 * 1024;

interface Owned {
  methods: readonly string[];
  kind: 'authorize' | 'token' | 'device_authorization' | 'device' | 'register' | 'plain';
}

function ownedPaths(dcrEnabled: boolean): Map<string, Owned> {
  const paths = new Map<string, Owned>([
    [OAUTH_ROUTES.authorization, { methods: ['GET', 'HEAD'], kind: 'authorize' }],
    [OAUTH_ROUTES.token, { methods: ['POST', 'OPTIONS'], kind: 'token' }],
    [OAUTH_ROUTES.device_authorization, { methods: ['POST', 'OPTIONS'], kind: 'device_authorization' }],
    [OAUTH_ROUTES.code_verification, { methods: ['GET', 'HEAD', 'POST'], kind: 'device' }],
    [OAUTH_ROUTES.revocation, { methods: ['POST', 'OPTIONS'], kind: 'plain' }],
    [OAUTH_ROUTES.introspection, { methods: ['POST', 'OPTIONS'], kind: 'plain' }],
    [OAUTH_ROUTES.jwks, { methods: ['GET', 'HEAD', 'OPTIONS'], kind: 'plain' }],
  ]);
  for (const path of WELL_KNOWN) paths.set(path, { methods: ['GET', 'HEAD', 'OPTIONS'], kind: 'plain' });
  if (dcrEnabled) paths.set(OAUTH_ROUTES.registration, { methods: ['POST'], kind: 'register' });
  return paths;
}

// The library's resume endpoints (after an interaction): /o/authorize/<uid>, /o/device/<uid>.
const RESUME = /^\/o\/(authorize|device)\/[A-Za-z0-9_-]{1,64}$/;

export function installOAuthMount(app: TypedApp, ctx: AppContext, server: LazyOAuthServer) {
  const { config } = ctx;
  const db = ctx.db.kysely;
  const owned = ownedPaths(config.dcrEnabled);
  let callback: ReturnType<OAuthServer['provider']['callback']> | null = null;
  const { protocol, host } = new URL(config.baseUrl);
  const scheme = protocol.slice(0, -1);

  app.addHook(
    'onRequest',
    hookForPaths(isOAuthPath, async (request, reply) => {
      const url = request.url;
      const path = url.split('?', 1)[0];
      const route =
        owned.get(path) ??
        (RESUME.test(path)
          ? ({ methods: ['GET', 'HEAD'], kind: path.startsWith('/o/device/') ? 'device' : 'authorize' } as Owned)
          : null);
      if (!route) return;
      // No Fastify route takes these requests: the metrics name them by template (never the resume uid).
      ctx.metrics?.nameRoute(request, owned.has(path) ? path : `/o/${route.kind}/:uid`);
      if (!route.methods.includes(request.method)) {
        return sendProblem(reply, 405, `Method ${request.method} is not allowed on this path.`, {
          headers: { Allow: route.methods.join(', ') },
        });
      }
      const raw = request.raw;
      const address = ctx.clientAddresses.of(raw);
      let body: Buffer | null = null;
      let limited: RateResult | null = null;
      const throttle = async () => {
        limited = await ctx.throttle.consume('auth', address);
        reply.headers(rateLimitHeaders(limited));
        if (!limited.allowed) {
          const problem = throttledProblem(limited);
          return sendProblem(reply, problem.status, problem.detail, problem);
        }
        return null;
      };

      if (request.method === 'POST' && route.kind !== 'device') {
        try {
          body = await readBody(raw);
        } catch {
          // The client went away or sent a broken stream: nothing to hand over.
          return oauthError(reply, 400, 'invalid_request', 'the request body could not be read');
        }
        if (body === null) {
          // Answered before the rest of the body is read; the connection then closes by draining it.
          closeAfterAnswer(raw);
          return oauthError(reply.header('Connection', 'close'), 413, 'invalid_request', 'request body too large');
        }
      }

      switch (route.kind) {
        case 'register': {
          if (await throttle()) return reply;
          let metadata;
          try {
            const parsed = /^application\/json\b/i.test(request.headers['content-type'] ?? '')
              ? JSON.parse(body!.toString('utf8'))
              : null;
            metadata = normaliseClientMetadata(parsed, ctx.scopes);
          } catch (error) {
            if (error instanceof RegistrationError) return oauthError(reply, 400, error.error, error.message);
            return oauthError(reply, 400, 'invalid_client_metadata', 'the registration request must be a JSON object');
          }
          body = Buffer.from(JSON.stringify(metadata));
          raw.headers['content-type'] = 'application/json';
          break;
        }
        case 'device_authorization':
          if (request.method === 'POST' && (await throttle())) return reply;
          break;
        case 'token': {
          if (request.method !== 'POST') break;
          const params = querystring.parse(body!.toString('utf8'));
          const deviceCode =
            params.grant_type === DEVICE_GRANT && typeof params.device_code === 'string' ? params.device_code : null;
          const verdict = deviceCode ? await checkDevicePoll(db, deviceCode) : 'unknown';
          // Polling with a live device code is governed by slow_down, everything else by the throttle.
          if (verdict === 'unknown' && (await throttle())) return reply;
          if (verdict === 'slow_down') {
            return oauthError(
              reply,
              400,
              'slow_down',
              'polling too fast: wait at least the interval (now increased by 5 seconds) between requests',
            );
          }
          break;
        }
        case 'authorize':
          setAppUser(raw, browserUser(request));
          break;
        case 'device': {
          const userId = browserUser(request);
          setAppUser(raw, userId);
          if (userId === null) {
            // The device page is for a logged-in person: log in first, then come back (code kept).
            return redirectToLogin(reply, url);
          }
          if (request.method === 'POST' && (await userCodeEntryBlocked(db, userId, address))) {
            ctx.metrics?.rateLimitRefused('failed_attempts');
            reply.header('Retry-After', '900');
            return renderError(reply, 429, 'Too many wrong codes were entered. Try again in 15 minutes.', '/o/device/');
          }
          break;
        }
        case 'plain':
          // The provider's other endpoints (discovery, keys, revocation, introspection) need no preparation.
          break;
      }

      // Built on the first request it answers (routes.ts), while a failure can still be a 500 problem.
      const handle = (callback ??= (await server.get()).provider.callback());
      // From here on the provider answers on the raw response.
      const res = reply.raw as ServerResponse;
      res.setHeader('X-Request-ID', request.id);
      if (limited) for (const [name, value] of Object.entries(rateLimitHeaders(limited))) res.setHeader(name, value);
      // The provider trusts X-Forwarded-* (provider.proxy) and builds its URLs (discovery, the device
      // verification_uri, redirects) from the request's scheme and host: give it BASE_URL's, and the
      // client address this service believes, never what the client or a proxy's internal hop sent.
      raw.headers['x-forwarded-proto'] = scheme;
      raw.headers['x-forwarded-host'] = host;
      raw.headers['x-forwarded-for'] = address;
      // Fastify still writes its one log line for the request when the raw response finishes.
      reply.hijack();
      void handle(body ? replay(raw, body) : raw, res);
    }),
  );
}

/**
 * The app session's user id (or null) for the provider's login check, with the page state stashed
 * for the pages the provider draws itself (html.ts). These are page paths: the authentication hook
 * has read the session cookie into request.identity.
 */
function browserUser(request: FastifyRequest): number | null {
  stashPage(request);
  return request.identity.user?.id ?? null;
}

const isOAuthPath = (url: string) => url.startsWith('/o/') || url.startsWith('/.well-known/o');

/** An RFC 6749 / RFC 7591 error object answer. */
function oauthError(reply: FastifyReply, status: number, error: string, description: string) {
  return reply.code(status).header('Cache-Control', 'no-store').send({ error, error_description: description });
}

/** The body, or null as soon as it is declared or found to be over BODY_LIMIT (the rest left unread). */
function readBody(req: IncomingMessage): Promise<Buffer | null> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > BODY_LIMIT) return Promise.resolve(null);
  // Listeners, not `for await`: leaving that loop early destroys the request, and with it the socket,
  // before the 413 is written.
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = () => {
      req.removeListener('data', onData);
      req.removeListener('end', onEnd);
      req.removeListener('error', reject);
      req.removeListener('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= BODY_LIMIT) return void chunks.push(chunk);
      stop();
      resolve(null);
    };
    const onEnd = () => {
      stop();
      resolve(Buffer.concat(chunks, size));
    };
    const onClose = () => {
      stop();
      reject(new Error('the request closed before its body ended'));
    };
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', reject);
    req.once('close', onClose);
  });
}

/**
 * A request that reads as `original` with `body`: the mount read the body itself (to throttle, to
 * apply the registration rules), and the provider must still be able to read one.
 */
function replay(original: IncomingMessage, body: Buffer): IncomingMessage {
  const copy = new IncomingMessage(original.socket);
  copy.method = original.method;
  copy.url = original.url;
  copy.httpVersion = original.httpVersion;
  copy.httpVersionMajor = original.httpVersionMajor;
  copy.httpVersionMinor = original.httpVersionMinor;
  copy.headers = { ...original.headers, 'content-length': String(body.length) };
  delete copy.headers['transfer-encoding'];
  // As the HTTP parser would: a message whose body has fully arrived. Without it, the stream's
  // end would count as an aborted request and destroy the shared socket.
  copy.complete = true;
  copy.push(body);
  copy.push(null);
  return copy;
}
