// Which scopes a client may register and request. oidc-provider only refuses a scope that is one
// of its configured scopes and missing from the client's registration; a scope it does not know it
// silently drops. Every scope of the registry is configured (provider.ts), so what is left to refuse
// here is the unknown ones.
import type { ScopeRegistry } from '../http/scopes.ts';

/** Scopes a client registered without `scope` gets: every registry scope except the reserved `admin`. */
export function defaultClientScopes(registry: ScopeRegistry): string[] {
  return registry.names().filter((name) => name !== 'admin');
}

/**
 * Splits an OAuth scope string (space-separated, RFC 6749 §3.3) into distinct names. OpenID's
 * `offline_access` ("a refresh token, please") is dropped: every client allowed the refresh_token
 * grant gets refresh tokens here anyway, and clients that ask for it out of habit should not fail.
 */
export function splitScope(value: unknown): string[] {
  if (typeof value !== 'string') return [];
  return [...new Set(value.split(' ').filter((scope) => scope && scope !== 'offline_access'))];
}

/** Names not in the registry, or null when all are known. */
export function unknownScopes(registry: ScopeRegistry, scopes: readonly string[]): string[] | null {
  const unknown = registry.unknown(scopes);
  return unknown.length ? unknown : null;
}
