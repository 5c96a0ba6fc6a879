// Authentication sets the one `request.identity` (identity.ts), whatever the credential. Where each
// credential is looked at:
//  - /api/: the Authorization header (bearer resolvers: PAT, JWT, OAuth token); without the header,
//    the session cookie (the session resolver). A request with the header never looks at the session.
//  - pages: the session cookie only.
//  - everything else (machine endpoints, static files, health): nothing, so a browser's cookie
//    costs those no session query.
// Credential modules register resolvers; routes only declare the scopes they need
// (`config: { scopes: [...] }`, any one of them suffices).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  ANONYMOUS,
  holdsAnyScope,
  isAuthenticated,
  missingScopeDetail,
  refusedCredential,
  type AuthenticatedIdentity,
  type Identity,
} from './identity.ts';
import { securityRequirements } from './openapi.ts';
import { HttpProblem } from './problem.ts';

export interface BearerResolver {
  /** Cheap syntactic test: does this token look like one of mine? */
  matches(token: string): boolean;
  /**
   * The identity, or null when the token is unknown, expired, revoked or its user inactive, or was
   * issued for another audience than `resource` (the protected resource the request is for: the
   * API, BASE_URL, or the MCP endpoint, BASE_URL/mcp). A resolver may answer synchronously (a cached
   * token) so that the request needs no promise.
   */
  resolve(
    token: string,
    request: FastifyRequest,
    resource: string,
  ): AuthenticatedIdentity | null | Promise<AuthenticatedIdentity | null>;
}

/**
 * Resolves the browser session (the accounts capability owns sessions). Each answers null at once
 * when the request carries no session cookie (nothing to look up, no promise), else the identity.
 */
export interface SessionResolver {
  /** A page: the session of either stage (a pending-TOTP one has no user but binds CSRF tokens). */
  forPage(request: FastifyRequest): Promise<Identity> | null;
  /** An API call without Authorization: a full session only; unsafe methods must prove CSRF (else it throws the 403). */
  forApi(request: FastifyRequest): Promise<Identity> | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by app.ts's onRequest hook on every request, before routing decides anything. */
    identity: Identity;
  }
  interface FastifyInstance {
    authenticator: Authenticator;
  }
  interface FastifyContextConfig {
    /** The route needs an authenticated identity holding any one of these scopes. */
    scopes?: string[];
  }
}

const BEARER = /^Bearer ([A-Za-z0-9._~+/=-]+)$/;

export class Authenticator {
  readonly #bearer: BearerResolver[] = [];
  #sessions: SessionResolver | null = null;
  readonly #resourceMetadataUrl: string;
  /** The API's resource identifier (RFC 8707): BASE_URL. */
  readonly #apiResource: string;

  constructor(baseUrl: string) {
    this.#apiResource = baseUrl;
    this.#resourceMetadataUrl = `${baseUrl}/.well-known/oauth-protected-resource`;
  }

  addBearer(resolver: BearerResolver) {
    this.#bearer.push(resolver);
  }

  useSessions(resolver: SessionResolver) {
    this.#sessions = resolver;
  }

  /**
   * An /api/ request: sets request.identity from the Authorization header, else from the session
   * cookie. Never throws for a bad credential (a session call failing CSRF rejects the promise).
   * Returns a promise only when a resolver needs one (a token not cached, a session): a cached PAT
   * is settled synchronously.
   */
  authenticate(request: FastifyRequest): Promise<void> | undefined {
    const header = request.headers.authorization;
    if (header === undefined) return this.#settle(request, this.#sessions?.forApi(request) ?? null);
    return this.#bearerHeader(request, header, this.#apiResource);
  }

  /**
   * A request only a bearer token may authenticate, for the protected resource `resource` (the MCP
   * endpoint): no Authorization header is nobody, whatever cookies the request carries.
   */
  authenticateBearer(request: FastifyRequest, resource: string): Promise<void> | undefined {
    const header = request.headers.authorization;
    if (header === undefined) {
      request.identity = ANONYMOUS;
      return;
    }
    return this.#bearerHeader(request, header, resource);
  }

  #bearerHeader(request: FastifyRequest, header: string, resource: string): Promise<void> | undefined {
    const match = BEARER.exec(header);
    if (!match) {
      request.identity = refusedCredential('Authorization header must be "Bearer <token>".');
      return;
    }
    const token = match[1];
    const resolver = this.#bearer.find((candidate) => candidate.matches(token));
    const resolved = resolver ? resolver.resolve(token, request, resource) : null;
    if (resolved instanceof Promise) {
      // Nobody until the resolver answers, so that an error answer (a failed query) has an identity too.
      request.identity = ANONYMOUS;
      return resolved.then((identity) => settleBearer(request, identity));
    }
    settleBearer(request, resolved);
  }

  /** A page request: request.identity from the session cookie (either stage). */
  authenticatePage(request: FastifyRequest): Promise<void> | undefined {
    return this.#settle(request, this.#sessions?.forPage(request) ?? null);
  }

  #settle(request: FastifyRequest, loading: Promise<Identity> | null): Promise<void> | undefined {
    request.identity = ANONYMOUS;
    if (!loading) return;
    return loading.then((identity) => {
      request.identity = identity;
    });
  }

  unauthorized(request: FastifyRequest): HttpProblem {
    const reason = request.identity.credentialError;
    const error = reason ? ', error="invalid_token"' : '';
    return new HttpProblem(401, reason ?? 'Authentication credentials were not provided.', {
      headers: { 'WWW-Authenticate': `Bearer realm="api"${error}, resource_metadata="${this.#resourceMetadataUrl}"` },
    });
  }

  /** preHandler for routes that declare scopes (callback style: no promise on every request). */
  requireScopes(scopes: readonly string[]) {
    const refusal = missingScopeDetail(scopes);
    return (request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void) => {
      const identity = request.identity;
      if (!isAuthenticated(identity)) return done(this.unauthorized(request));
      if (!holdsAnyScope(identity, scopes)) return done(new HttpProblem(403, refusal));
      done();
    };
  }
}

function settleBearer(request: FastifyRequest, identity: AuthenticatedIdentity | null): void {
  request.identity = identity ?? refusedCredential('Invalid, expired or revoked token.');
}

/** Decorates requests and wires scope checks into every route that declares `config.scopes`. */
export function installAuthentication(app: FastifyInstance, authenticator: Authenticator) {
  // Every request gets its identity in app.ts's first onRequest hook; the null before it is never read.
  // (Fastify refuses an object as a request decoration's initial value, so ANONYMOUS cannot be it.)
  app.decorateRequest('identity', null as unknown as Identity);
  app.decorate('authenticator', authenticator);
  app.addHook('onRoute', (route) => {
    const scopes = route.config?.scopes;
    if (!scopes) return;
    const check = authenticator.requireScopes(scopes);
    const existing = route.preHandler ? (Array.isArray(route.preHandler) ? route.preHandler : [route.preHandler]) : [];
    route.preHandler = [check, ...existing];
    if (route.schema) {
      route.schema = { ...route.schema, security: securityRequirements(scopes) } as typeof route.schema;
    }
  });
}
