// OAuth access tokens as bearer credentials: the opaque token is looked up through the provider
// (AccessToken.find: one indexed read, expiry and format checked by the library), then its user,
// which must still be active; its audience must be the resource the request is for (the API or the
// MCP endpoint). The identity carries exactly the token's scopes. Tokens of a client the operator
// turned off (the built-in CLI client, first-party.ts) stop working at once.
import type { Kysely } from 'kysely';
import type Provider from 'oidc-provider';
import { toAuthUser } from '../accounts/users.ts';
import type { Database } from '../db/schema.ts';
import type { BearerResolver } from '../http/auth.ts';
import { bearerIdentity, type AuthenticatedIdentity } from '../http/identity.ts';

// oidc-provider's opaque tokens: 256 random bits in base64url (43 characters).
const OPAQUE_TOKEN = /^[A-Za-z0-9_-]{43}$/;

export class OAuthBearerResolver implements BearerResolver {
  /** The provider, built on the first OAuth-looking token (routes.ts: built on first use). */
  readonly #provider: () => Promise<Provider>;
  readonly #db: Kysely<Database>;
  readonly #refusedClients: ReadonlySet<string>;

  constructor(
    provider: () => Promise<Provider>,
    db: Kysely<Database>,
    refusedClients: ReadonlySet<string> = new Set(),
  ) {
    this.#provider = provider;
    this.#db = db;
    this.#refusedClients = refusedClients;
  }

  matches(token: string): boolean {
    return OPAQUE_TOKEN.test(token) && !token.startsWith('svc_');
  }

  async resolve(token: string, _request: unknown, resource: string): Promise<AuthenticatedIdentity | null> {
    const provider = await this.#provider();
    const accessToken = await provider.AccessToken.find(token);
    if (!accessToken || accessToken.isExpired || !accessToken.accountId) return null;
    if (accessToken.clientId && this.#refusedClients.has(accessToken.clientId)) return null;
    // Issued for the resource the request is for (RFC 8707 audience): a token for the API is no
    // credential at the MCP endpoint, and the other way round. Every token is issued for exactly
    // one resource (provider.ts: resource indicators, a resource by default).
    const audience = accessToken.aud;
    if (audience !== resource && !(Array.isArray(audience) && audience.includes(resource))) return null;
    if (!/^\d{1,15}$/.test(accessToken.accountId)) return null;
    const user = await this.#db
      .selectFrom('users')
      .select(['id', 'email', 'first_name', 'last_name', 'display_name', 'is_staff', 'is_active'])
      .where('id', '=', Number(accessToken.accountId))
      .executeTakeFirst();
    if (!user || user.is_active !== 1) return null;
    const scopes = new Set((accessToken.scope ?? '').split(' ').filter(Boolean));
    return bearerIdentity(
      'oauth',
      toAuthUser(user),
      `oauth:${accessToken.clientId}:${accessToken.grantId ?? ''}`,
      scopes,
    );
  }
}
