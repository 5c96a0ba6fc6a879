// Who is calling, in one shape for every request: the user (or nobody), the credential that proved it
// (a PAT, a JWT, an OAuth access token or the browser session) and what that credential may do, and
// the browser session where one counts. app.ts's onRequest hook sets `request.identity` before
// anything reads it (http/auth.ts says where each credential is looked at); handlers narrow it with
// requireUser() / requireScope() instead of asserting that a user is there.
import type { FastifyRequest } from 'fastify';
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

/** A browser session (accounts/sessions.ts): 'mfa' after the password step of a TOTP user, 'full' after login. */
export interface SessionInfo {
  readonly id: string;
  readonly stage: 'mfa' | 'full';
  /** Epoch ms of the last password/TOTP proof in this session (login counts), or null. */
  readonly reauthAt: number | null;
  readonly emailVerified: boolean;
  /**
   * The account the session was started for. It is the request's user only once the session is
   * full; a pending-TOTP session's account is the one whose code is awaited.
   */
  readonly account: AuthUser;
}

export interface Identity {
  /** null: no credential, an invalid one, or a session still waiting for its TOTP code. */
  readonly user: AuthUser | null;
  readonly kind: CredentialKind | null;
  /** Identifies the credential (token id, jti, session id prefix) for logs and revocation. */
  readonly credentialId: string | null;
  /** null means the credential carries the user's full access. */
  readonly scopes: ReadonlySet<string> | null;
  /** The browser session, where one counts (pages, the cookie-authenticated API); a pending one binds CSRF tokens. */
  readonly session: SessionInfo | null;
  /** Why a presented credential was refused; null when none was presented or it was valid. */
  readonly credentialError: string | null;
  /**
   * The request runs inside another one the throttle has counted already (an MCP tool call runs its
   * API route in-process, mcp/tool-calls.ts): it is not counted again.
   */
  readonly precounted?: true;
}

/** An identity with a user: what requireUser() and requireScope() hand back. */
export interface AuthenticatedIdentity extends Identity {
  readonly user: AuthUser;
  readonly kind: CredentialKind;
  readonly credentialId: string;
}

const NO_SCOPES: ReadonlySet<string> = new Set();

/** Nobody: shared by every request without a credential, so an anonymous request allocates nothing. */
export const ANONYMOUS: Identity = Object.freeze({
  user: null,
  kind: null,
  credentialId: null,
  scopes: NO_SCOPES,
  session: null,
  credentialError: null,
});

/** Nobody, because the credential presented was refused (`reason` goes into the 401). */
export const refusedCredential = (reason: string): Identity => ({ ...ANONYMOUS, credentialError: reason });

/** The identity a bearer token gives (PAT, JWT, OAuth access token): no session. */
export function bearerIdentity(
  kind: Exclude<CredentialKind, 'session'>,
  user: AuthUser,
  credentialId: string,
  scopes: ReadonlySet<string> | null,
): AuthenticatedIdentity {
  return { user, kind, credentialId, scopes, session: null, credentialError: null };
}

export const isAuthenticated = (identity: Identity): identity is AuthenticatedIdentity => identity.user !== null;

/** Whether the identity's credential holds any one of `scopes` (a full-access credential holds all). */
export function holdsAnyScope(identity: AuthenticatedIdentity, scopes: readonly string[]): boolean {
  const held = identity.scopes;
  return held === null || scopes.some((scope) => held.has(scope));
}

/** The 403 detail naming what a route accepts, word for word as the API documents it. */
export function missingScopeDetail(scopes: readonly string[]): string {
  const needed =
    scopes.length === 1 ? `the "${scopes[0]}" scope` : `one of the scopes ${scopes.map((s) => `"${s}"`).join(', ')}`;
  return `This credential lacks ${needed}.`;
}

/**
 * The request's identity with its user, or the 401 problem. In a route that declares
 * `config.scopes` the scope check has answered 401 already, so this only narrows the type.
 */
export function requireUser(request: FastifyRequest): AuthenticatedIdentity {
  const identity = request.identity;
  if (!isAuthenticated(identity)) throw request.server.authenticator.unauthorized(request);
  return identity;
}

/** requireUser(), and a 403 unless the credential holds any one of `scopes`. */
export function requireScope(request: FastifyRequest, scopes: readonly string[]): AuthenticatedIdentity {
  const identity = requireUser(request);
  if (!holdsAnyScope(identity, scopes)) throw new HttpProblem(403, missingScopeDetail(scopes));
  return identity;
}
