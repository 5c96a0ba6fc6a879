// Authentication resolves one principal {user, credential kind, scopes} per request, whatever the
// credential (PAT, JWT, OAuth token, session). Credential modules register resolvers; routes only
// declare the scopes they need (`config: { scopes: [...] }`, any one of them suffices).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { securityRequirements } from './openapi.ts';
import { HttpProblem } from './problem.ts';

export type CredentialKind = 'pat' | 'jwt' | 'oauth' | 'session';

export interface AuthUser {
  id: number;
  email: string;
  first_name: string;
  last_name: string;
  display_name: string;
  is_staff: boolean;
}

export interface Principal {
  user: AuthUser;
  kind: CredentialKind;
  /** null means the credential carries the user's full access. */
  scopes: ReadonlySet<string> | null;
  /** Identifies the credential (token id, jti, session id) for logs and revocation. */
  credentialId: string;
}

export interface BearerResolver {
  /** Cheap syntactic test: does this token look like one of mine? */
  matches(token: string): boolean;
  /**
   * The principal, or null when the token is unknown, expired, revoked or its user inactive. A
   * resolver may answer synchronously (a cached token) so that the request needs no promise.
   */
  resolve(token: string, request: FastifyRequest): Principal | null | Promise<Principal | null>;
}

/** Resolves a credential that does not come in the Authorization header (the session cookie). */
export type AmbientResolver = (request: FastifyRequest) => Promise<Principal | null>;

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
    /** Why a presented credential was refused; null when none was presented or it was valid. */
    credentialError: string | null;
  }
  interface FastifyContextConfig {
    /** The route needs an authenticated principal holding any one of these scopes. */
    scopes?: string[];
  }
}

const BEARER = /^Bearer ([A-Za-z0-9._~+/=-]+)$/;

export class Authenticator {
  readonly #bearer: BearerResolver[] = [];
  readonly #ambient: AmbientResolver[] = [];
  readonly #resourceMetadataUrl: string;

  constructor(baseUrl: string) {
    this.#resourceMetadataUrl = `${baseUrl}/.well-known/oauth-protected-resource`;
  }

  addBearer(resolver: BearerResolver) {
    this.#bearer.push(resolver);
  }

  addAmbient(resolver: AmbientResolver) {
    this.#ambient.push(resolver);
  }

  /**
   * Sets request.principal / request.credentialError. Never throws for a bad credential. Returns a
   * promise only when a resolver needs one (a token not cached, a session): a cached PAT is settled
   * synchronously.
   */
  authenticate(request: FastifyRequest): Promise<void> | undefined {
    const header = request.headers.authorization;
    if (header === undefined) return this.#ambient.length > 0 ? this.#authenticateAmbient(request) : undefined;
    const match = BEARER.exec(header);
    if (!match) {
      request.credentialError = 'Authorization header must be "Bearer <token>".';
      return;
    }
    const token = match[1];
    const resolver = this.#bearer.find((candidate) => candidate.matches(token));
    const principal = resolver ? resolver.resolve(token, request) : null;
    if (principal instanceof Promise) return principal.then((resolved) => settleBearer(request, resolved));
    settleBearer(request, principal);
  }

  async #authenticateAmbient(request: FastifyRequest): Promise<void> {
    for (const resolve of this.#ambient) {
      const principal = await resolve(request);
      if (principal) {
        request.principal = principal;
        return;
      }
    }
  }

  unauthorized(request: FastifyRequest): HttpProblem {
    const error = request.credentialError ? ', error="invalid_token"' : '';
    return new HttpProblem(401, request.credentialError ?? 'Authentication credentials were not provided.', {
      headers: { 'WWW-Authenticate': `Bearer realm="api"${error}, resource_metadata="${this.#resourceMetadataUrl}"` },
    });
  }

  /** preHandler for routes that declare scopes (callback style: no promise on every request). */
  requireScopes(scopes: readonly string[]) {
    const needed = scopes.length === 1 ? `the "${scopes[0]}" scope` : `one of the scopes ${scopes.map((s) => `"${s}"`).join(', ')}`;
    return (request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void) => {
      const principal = request.principal;
      if (!principal) return done(this.unauthorized(request));
      if (principal.scopes && !scopes.some((scope) => principal.scopes!.has(scope))) {
        return done(new HttpProblem(403, `This credential lacks ${needed}.`));
      }
      done();
    };
  }
}

function settleBearer(request: FastifyRequest, principal: Principal | null): void {
  if (principal) request.principal = principal;
  else request.credentialError = 'Invalid, expired or revoked token.';
}

/** Decorates requests and wires scope checks into every route that declares `config.scopes`. */
export function installAuthentication(app: FastifyInstance, authenticator: Authenticator) {
  app.decorateRequest('principal', null);
  app.decorateRequest('credentialError', null);
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
