// Client metadata rules of this service, applied to a dynamic registration body (RFC 7591) before
// oidc-provider sees it, and to `svc oauth create-client`. The documented body must work as written:
// `{client_name, grant_types, scope, token_endpoint_auth_method}`. The library would default a
// device-only client to `response_types: ["code"]` and then demand redirect URIs, so the rules
// below set `response_types` from the grant types.
import type { ScopeRegistry } from '../http/scopes.ts';
import { ValidationError } from '../util/domain-errors.ts';
import { DEVICE_GRANT } from './constants.ts';
import { defaultClientScopes, splitScope, unknownScopes } from './scope-policy.ts';

/**
 * Metadata that breaks a rule. A ValidationError like any other (the CLI's bad argument), carrying
 * the RFC 7591 error code that dynamic registration answers with instead of problem details.
 */
export class RegistrationError extends ValidationError {
  readonly error: 'invalid_client_metadata' | 'invalid_redirect_uri';
  constructor(error: 'invalid_client_metadata' | 'invalid_redirect_uri', description: string) {
    super(description);
    this.error = error;
  }
}

export const GRANT_TYPES = ['authorization_code', DEVICE_GRANT, 'refresh_token'] as const;
/**
 * Client metadata of this service: the scope the client registered with. The library's `scope`
 * is a ceiling it enforces at every authorization; the registered scope is no ceiling here (a
 * client may ask for more later, and get it after consent), only what a request without `scope`
 * asks for and what the registration answer echoes.
 */
export const REGISTERED_SCOPE = 'svc_registered_scope';
const AUTH_METHODS = ['none', 'client_secret_basic', 'client_secret_post'];
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);
// Informational fields passed through to the library; anything else is ignored (RFC 7591 §2).
const PASS_THROUGH = ['client_uri', 'logo_uri', 'policy_uri', 'tos_uri', 'contacts'] as const;

export interface ClientMetadata {
  client_name?: string;
  grant_types: string[];
  response_types: string[];
  redirect_uris: string[];
  token_endpoint_auth_method: string;
  /** The scopes the library lets the client ask for: every scope but the reserved `admin` (unless registered). */
  scope: string;
  [REGISTERED_SCOPE]: string;
  [key: string]: unknown;
}

/** https, or http on a loopback host (RFC 8252 §7.3); absolute, without fragment. */
export function redirectUriProblem(uri: unknown): string | null {
  if (typeof uri !== 'string' || uri.length > 2000)
    return 'each redirect URI must be a string of at most 2000 characters';
  const url = URL.parse(uri);
  if (!url) return `"${uri}" is not an absolute URI`;
  if (url.hash || uri.includes('#')) return `"${uri}" must not contain a fragment`;
  if (url.username || url.password) return `"${uri}" must not contain credentials`;
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)) return null;
  return `"${uri}" must use https (http only for a loopback address)`;
}

export function normaliseClientMetadata(body: unknown, registry: ScopeRegistry): ClientMetadata {
  const fail = (description: string) => new RegistrationError('invalid_client_metadata', description);
  if (!body || typeof body !== 'object' || Array.isArray(body))
    throw fail('the registration request must be a JSON object');
  const input = body as Record<string, unknown>;

  const name = input.client_name;
  if (name !== undefined && (typeof name !== 'string' || name.trim() === '' || name.length > 200)) {
    throw fail('client_name must be a non-empty string of at most 200 characters');
  }

  let grants: string[];
  if (input.grant_types === undefined) grants = ['authorization_code'];
  else if (!Array.isArray(input.grant_types) || input.grant_types.some((g) => typeof g !== 'string')) {
    throw fail('grant_types must be an array of strings');
  } else grants = [...new Set(input.grant_types as string[])];
  const unknownGrant = grants.find((g) => !(GRANT_TYPES as readonly string[]).includes(g));
  if (unknownGrant) throw fail(`unsupported grant type "${unknownGrant}" (supported: ${GRANT_TYPES.join(', ')})`);
  const authorizationCode = grants.includes('authorization_code');
  if (!authorizationCode && !grants.includes(DEVICE_GRANT)) {
    throw fail(`grant_types must include authorization_code or ${DEVICE_GRANT}`);
  }
  // Every client may refresh (refresh tokens are rotated and bound to the client): added by default.
  if (!grants.includes('refresh_token')) grants.push('refresh_token');

  const method = input.token_endpoint_auth_method ?? (authorizationCode ? 'client_secret_basic' : 'none');
  if (typeof method !== 'string' || !AUTH_METHODS.includes(method)) {
    throw fail(`token_endpoint_auth_method must be one of ${AUTH_METHODS.join(', ')}`);
  }

  let responseTypes: string[] = [];
  if (authorizationCode) {
    if (input.response_types !== undefined && JSON.stringify(input.response_types) !== '["code"]') {
      throw fail('response_types must be ["code"]');
    }
    responseTypes = ['code'];
  } else if (
    input.response_types !== undefined &&
    !(Array.isArray(input.response_types) && input.response_types.length === 0)
  ) {
    throw fail('response_types must be empty for a client without the authorization_code grant');
  }

  let redirectUris: string[] = [];
  if (authorizationCode) {
    const uris = input.redirect_uris;
    if (!Array.isArray(uris) || uris.length === 0) {
      throw new RegistrationError(
        'invalid_redirect_uri',
        'redirect_uris must list at least one URI for the authorization_code grant',
      );
    }
    for (const uri of uris) {
      const problem = redirectUriProblem(uri);
      if (problem) throw new RegistrationError('invalid_redirect_uri', problem);
    }
    redirectUris = [...new Set(uris as string[])];
  }

  let scope: string[];
  if (input.scope === undefined) scope = defaultClientScopes(registry);
  else {
    if (typeof input.scope !== 'string') throw fail('scope must be a space-separated string');
    scope = splitScope(input.scope);
    if (scope.length === 0) throw fail('scope must name at least one scope');
    const unknown = unknownScopes(registry, scope);
    if (unknown) throw fail(`unknown scope: ${unknown.join(' ')}`);
  }

  const metadata: ClientMetadata = {
    grant_types: grants,
    response_types: responseTypes,
    redirect_uris: redirectUris,
    token_endpoint_auth_method: method,
    scope: registry
      .names()
      .filter((name) => scope.includes(name) || defaultClientScopes(registry).includes(name))
      .join(' '),
    [REGISTERED_SCOPE]: scope.join(' '),
  };
  if (typeof name === 'string') metadata.client_name = name.trim();
  for (const field of PASS_THROUGH) if (input[field] !== undefined) metadata[field] = input[field];
  return metadata;
}
