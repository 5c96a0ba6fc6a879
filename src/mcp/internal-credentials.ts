// How a tool call's API request carries the MCP request's identity: a bearer credential that lives
// in this process only, for the length of one call. The API route then runs exactly as for any
// other caller (its own authentication hook, scope check, validation, permissions, idempotency),
// with the identity the MCP endpoint established, not with the MCP access token itself: that token
// was issued for the MCP endpoint (its audience) and the API refuses it. The identity is marked
// `precounted`: the MCP request was counted by the throttle, and its tool call is not counted again.
import { randomBytes } from 'node:crypto';
import type { BearerResolver } from '../http/auth.ts';
import type { AuthenticatedIdentity } from '../http/identity.ts';

// Neither a PAT (svc_), an opaque OAuth token (43 characters, no dot) nor a JWT (eyJ…).
const PREFIX = 'mcp-call.';

export class InternalCredentials implements BearerResolver {
  readonly #live = new Map<string, AuthenticatedIdentity>();
  /**
   * 256 random bits drawn once; each credential is this plus a counter. As unguessable as a fresh
   * random value per call (the prefix never leaves the process), without a random draw per tool call.
   */
  readonly #prefix = `${PREFIX}${randomBytes(32).toString('base64url')}.`;
  #counter = 0;

  matches(token: string): boolean {
    return token.startsWith(PREFIX);
  }

  /** Synchronous: the identity of a call in progress, or null (unknown, or the call is over). */
  resolve(token: string): AuthenticatedIdentity | null {
    return this.#live.get(token) ?? null;
  }

  /** A credential standing for `identity` until `revoke`; never sent off the process. */
  issue(identity: AuthenticatedIdentity): string {
    const token = this.#prefix + (++this.#counter).toString(36);
    this.#live.set(token, { ...identity, precounted: true });
    return token;
  }

  revoke(token: string): void {
    this.#live.delete(token);
  }
}
