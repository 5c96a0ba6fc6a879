// The OAuth 2.0 authorization server: oidc-provider configured for this service. Issuer = BASE_URL,
// routes under /o/ with trailing slashes, storage in the database (adapter.ts), keys from SECRET_KEY
// (keys.ts), scopes from the registry, accounts from the users table. What the library does not do
// by itself and this service wants is added around it: unknown scopes refused and the default scope
// (checkRequestedScopes below), `interval` in the device authorization answer (post-middleware below),
// slow_down (device-polling.ts), the DCR body rules (registration.ts), throttling (mount.ts), the
// resources tokens are issued for (resources.ts), Client ID Metadata Documents fetched through the
// SSRF guard (client-metadata-documents.ts).
import { timingSafeEqual } from 'node:crypto';
import Provider, { errors, interactionPolicy, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';
import type { AppContext } from '../app-context.ts';
import { kyselyAdapterFor } from './adapter.ts';
import {
  clientIdMetadataDocumentFeature,
  MAX_DOCUMENT_BYTES,
  metadataDocumentFetch,
} from './client-metadata-documents.ts';
import {
  AUTHORIZATION_CODE_TTL,
  DEVICE_CODE_TTL,
  DEVICE_POLL_INTERVAL,
  GRANT_TTL,
  OAUTH_ROUTES,
  appUserOf,
  interactionPath,
} from './constants.ts';
import { loadExistingGrant } from './consents.ts';
import { devicePages } from './device-pages.ts';
import { firstPartyClients } from './first-party.ts';
import { cookieKeys, hashClientSecret, signingJwks } from './keys.ts';
import { REGISTERED_SCOPE } from './registration.ts';
import { resourceAudiences } from './resources.ts';
import { splitScope, unknownScopes } from './scope-policy.ts';

export interface OAuthServer {
  provider: Provider;
  /** The protected resource (RFC 8707 / RFC 9728): the API, identified by BASE_URL. */
  resource: string;
}

export function createOAuthServer(ctx: AppContext): OAuthServer {
  const { config, scopes: registry } = ctx;
  const db = ctx.db.kysely;
  const secretKey = config.secretKey!;
  const resource = config.baseUrl;
  const audiences = resourceAudiences(config);
  const { accessTokenTtlSeconds, refreshTokenTtlSeconds } = config.oauth;

  // The login prompt also asks when the browser's app session is not the user the provider's own
  // session remembers (logged out, or another user logged in since): the app session is the truth.
  const policy = interactionPolicy.base();
  policy.get('login')!.checks.add(
    new interactionPolicy.Check('app_session_changed', 'the service session changed', (koa) => {
      const appUser = appUserOf(koa.req);
      if (appUser === undefined) return interactionPolicy.Check.NO_NEED_TO_PROMPT;
      return appUser === null || String(appUser) !== koa.oidc.session?.accountId
        ? interactionPolicy.Check.REQUEST_PROMPT
        : interactionPolicy.Check.NO_NEED_TO_PROMPT;
    }),
  );

  const pages = devicePages(ctx);
  const configuration: Configuration = {
    adapter: kyselyAdapterFor(db),
    clients: firstPartyClients(config, registry) as Configuration['clients'],
    jwks: signingJwks(secretKey),
    cookies: {
      keys: cookieKeys(secretKey),
      names: { session: 'svc_oauth_session', interaction: 'svc_oauth_interaction', resume: 'svc_oauth_resume' },
      long: { httpOnly: true, sameSite: 'lax' },
      short: { httpOnly: true, sameSite: 'lax' },
    },
    // Every registry scope is an OIDC-level scope for the library (listed here) and a scope of the
    // API resource server (getResourceServerInfo): consent grants both (consents.ts).
    scopes: registry.names(),
    responseTypes: ['code'],
    clientAuthMethods: ['client_secret_basic', 'client_secret_post', 'none'],
    // The scope a client registered (registration.ts): echoed by registration, asked for by a request without `scope`.
    extraClientMetadata: {
      properties: [REGISTERED_SCOPE],
      validator: (_koa, key, value) => {
        if (key === REGISTERED_SCOPE && value !== undefined && typeof value !== 'string')
          throw new errors.InvalidClientMetadata(`${key} must be a string`);
      },
    },
    // The one outbound request the library makes here: Client ID Metadata Documents.
    fetch: metadataDocumentFetch(config.webhooks, registry) as unknown as Configuration['fetch'],
    fetchResponseBodyLimits: { 'client_id metadata document': MAX_DOCUMENT_BYTES },
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
      id_token_signed_response_alg: 'EdDSA',
    },
    // Redirect URIs are matched exactly and must be sent; PKCE S256 for every authorization code.
    allowOmittingSingleRegisteredRedirectUri: false,
    pkce: { required: () => true },
    routes: OAUTH_ROUTES,
    features: {
      devInteractions: { enabled: false },
      userinfo: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
      dPoP: { enabled: false },
      claimsParameter: { enabled: false },
      deviceFlow: {
        enabled: true,
        charset: 'base-20', // consonants only: BCDFGHJKLMNPQRSTVWXZ
        mask: '****-****',
        deviceInfo: pages.deviceInfo,
        userCodeInputSource: pages.userCodeInputSource,
        userCodeConfirmSource: pages.userCodeConfirmSource,
        successSource: pages.successSource,
      },
      registration: { enabled: config.dcrEnabled, initialAccessToken: false, issueRegistrationAccessToken: false },
      clientIdMetadataDocument: clientIdMetadataDocumentFeature(),
      revocation: {
        enabled: true,
        // A client revokes only its own tokens (RFC 7009 §2.1); for another client's token a public
        // client gets the usual 200 (nothing revoked), a confidential one an error.
        allowedPolicy: async (_koa, client, token) => {
          if (token.clientId === client.clientId) return true;
          if (client.clientAuthMethod === 'none') return false;
          throw new errors.InvalidRequest('client is not authorized to revoke the presented token');
        },
      },
      introspection: {
        enabled: true,
        // RFC 7662 for authenticated (confidential) clients only, and only about their own tokens.
        allowedPolicy: async (_koa, client, token) =>
          client.clientAuthMethod !== 'none' && token.clientId === client.clientId,
      },
      resourceIndicators: {
        enabled: true,
        // A request naming no resource is for the API (clients from before the MCP endpoint send none).
        defaultResource: async (_koa, _client, oneOf) => {
          if (oneOf) return oneOf.find((value) => audiences.has(value)) ?? oneOf[0];
          return resource;
        },
        // Tokens are always for the resource the grant was made for.
        useGrantedResource: async () => true,
        getResourceServerInfo: async (koa, indicator, client) => {
          const audience = audiences.get(indicator);
          if (!audience) throw new errors.InvalidTarget();
          // Called for every authorization and device authorization request (the resource defaults
          // to the API) after the client and redirect URI are verified and before any prompt: the
          // one place the library lets this service judge the requested scopes, with errors that
          // go back to the client the OAuth way.
          checkRequestedScopes(koa, client);
          return {
            scope: registry.names().join(' '),
            audience,
            accessTokenTTL: accessTokenTtlSeconds,
            accessTokenFormat: 'opaque',
          };
        },
      },
    },
    ttl: {
      AccessToken: accessTokenTtlSeconds,
      AuthorizationCode: AUTHORIZATION_CODE_TTL,
      RefreshToken: refreshTokenTtlSeconds,
      DeviceCode: DEVICE_CODE_TTL,
      Grant: GRANT_TTL,
      Interaction: 3600,
      Session: config.accounts?.sessionTtlSeconds ?? 14 * 86400,
    },
    // Refresh tokens for every client allowed the refresh_token grant (no offline_access needed),
    // rotated on every use; tokens do not end with the provider's browser session.
    issueRefreshToken: async (_koa, client) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: true,
    expiresWithSession: async () => false,
    loadExistingGrant: (koa) => loadExistingGrant(koa, db),
    interactions: { policy, url: async (_koa, interaction) => interactionPath(interaction.uid) },
    findAccount: async (_koa, sub) => {
      if (!/^\d{1,15}$/.test(sub)) return undefined;
      const user = await db
        .selectFrom('users')
        .select(['id', 'is_active'])
        .where('id', '=', Number(sub))
        .executeTakeFirst();
      if (!user || user.is_active !== 1) return undefined;
      return { accountId: sub, claims: async () => ({ sub }) };
    },
    // Browser-based public clients may call the token endpoint from their redirect URIs' origins.
    clientBasedCORS: (_koa, origin, client) =>
      client.clientAuthMethod === 'none' &&
      (client.redirectUris ?? []).some((uri) => URL.parse(uri)?.origin === origin),
    renderError: async (koa, out) => {
      koa.type = 'html';
      koa.body = pages.errorHtml(
        koa,
        String(out.error_description ?? out.error ?? 'The request could not be completed.'),
      );
    },
  };

  const provider = new Provider(config.baseUrl, configuration);
  // The issuer is BASE_URL whatever address the request came in on; mount.ts sets the forwarded
  // scheme from BASE_URL so cookies are Secure exactly when BASE_URL is https.
  provider.proxy = true;

  // Client secrets are stored as digests (adapter.ts); compare a presented secret by its digest.
  provider.Client.prototype.compareClientSecret = function compareClientSecret(
    this: { clientSecret?: string },
    actual: string,
  ) {
    const stored = this.clientSecret ?? '';
    const presented = stored.startsWith('sha256:') ? hashClientSecret(String(actual)) : String(actual);
    const a = Buffer.from(stored);
    const b = Buffer.from(presented);
    return a.length === b.length && timingSafeEqual(a, b);
  };

  // Post-processing of library answers that this service words differently:
  //  - the device authorization response gains `interval` (RFC 8628 §3.2; slow_down in device-polling.ts)
  //  - discovery lists the registry's scopes (the library adds `openid`, which this service refuses)
  //  - registration echoes the scope the client registered, not the library's ceiling (registration.ts).
  provider.use(async (koa, next) => {
    await next();
    const route = (koa as KoaContextWithOIDC).oidc?.route;
    if (route === 'device_authorization' && koa.status === 200 && koa.body && typeof koa.body === 'object') {
      (koa.body as Record<string, unknown>).interval = DEVICE_POLL_INTERVAL;
    } else if (route === 'registration' && koa.status === 201 && koa.body && typeof koa.body === 'object') {
      const body = koa.body as Record<string, unknown>;
      if (typeof body[REGISTERED_SCOPE] === 'string') body.scope = body[REGISTERED_SCOPE];
      delete body[REGISTERED_SCOPE];
    } else if (route === 'discovery' && koa.body && typeof koa.body === 'object') {
      const body = koa.body as Record<string, unknown>;
      body.scopes_supported = registry.names();
      delete body.claims_supported;
      delete body.claim_types_supported;
    }
  });

  /** Unknown scopes are refused; a request without `scope` asks for what the client registered. */
  function checkRequestedScopes(koa: KoaContextWithOIDC, client: KoaContextWithOIDC['oidc']['client']) {
    const route = koa.oidc.route;
    if (route !== 'authorization' && route !== 'device_authorization') return;
    const params = koa.oidc.params!;
    const requested = splitScope(params.scope);
    if (requested.length === 0) {
      const registered = client?.metadata()[REGISTERED_SCOPE];
      const fallback = typeof registered === 'string' ? registered : client?.scope;
      if (fallback) params.scope = fallback;
      return;
    }
    const unknown = unknownScopes(registry, requested);
    if (unknown) throw new errors.InvalidScope(`unknown scope: ${unknown.join(' ')}`, unknown.join(' '));
    params.scope = requested.join(' ');
  }

  return { provider, resource };
}
