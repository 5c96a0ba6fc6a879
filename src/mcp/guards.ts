// What the MCP endpoint checks before any MCP message is read:
//  - DNS-rebinding protection (MCP transport spec): the Host must be the service's own host (BASE_URL's
//    host name, any port; for a loopback BASE_URL any loopback name), and an Origin, when a browser
//    sends one, must be BASE_URL's origin exactly. Anything else is 403.
//  - The RFC 6750 / RFC 9728 challenges of the MCP authorization spec: a 401 names the endpoint's
//    protected resource metadata and the scopes a client should start with; a tool call needing a
//    scope the token lacks is a 403 `insufficient_scope` naming the scopes to ask for.
import type { AuthenticatedIdentity, Identity } from '../http/identity.ts';

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/** The scopes a new MCP client is told to ask for: enough to read who the user is and their teams. */
export const STARTING_SCOPES = ['read:profile', 'read:teams'] as const;

export class RequestGuard {
  readonly #origin: string;
  readonly #hosts: ReadonlySet<string>;

  constructor(baseUrl: string) {
    const base = new URL(baseUrl);
    this.#origin = base.origin;
    this.#hosts = LOOPBACK.has(base.hostname) ? LOOPBACK : new Set([base.hostname.toLowerCase()]);
  }

  /** Why the request is refused (the 403 detail), or null. */
  refusal(host: string | undefined, origin: string | undefined): string | null {
    const name = host === undefined ? undefined : URL.parse(`http://${host}`)?.hostname.toLowerCase();
    if (!name || !this.#hosts.has(name)) return 'The Host header does not name this service.';
    if (origin !== undefined && origin !== this.#origin) return 'Requests from another origin are not accepted.';
    return null;
  }
}

export class Challenges {
  readonly #metadataUrl: string;
  readonly #starting: string;

  constructor(metadataUrl: string) {
    this.#metadataUrl = metadataUrl;
    this.#starting = STARTING_SCOPES.join(' ');
  }

  /** 401: no credential (no `error`), or a refused one (`invalid_token`). */
  unauthorized(identity: Identity): string {
    const error = identity.credentialError ? 'error="invalid_token", ' : '';
    return `Bearer ${error}resource_metadata="${this.#metadataUrl}", scope="${this.#starting}"`;
  }

  /** 403 step-up: the scopes held plus `needed`, so that the client re-authorizes for all of them. */
  insufficientScope(identity: AuthenticatedIdentity, needed: string): string {
    const scopes = [...(identity.scopes ?? []), needed].filter((scope, i, all) => all.indexOf(scope) === i);
    return `Bearer error="insufficient_scope", scope="${scopes.join(' ')}", resource_metadata="${this.#metadataUrl}"`;
  }
}
