// The settings of accounts, sessions and token issuance (docs/accounts.md), and of the OAuth 2.0
// server's tokens (docs/oauth.md).
import { ConfigError, readBool, readInt, type Env } from './config-read.ts';

/** Accounts, sessions, PAT and JWT issuance settings (docs/accounts.md). */
export interface AccountSettings {
  /** PAT and JWT issuance need a verified e-mail address. */
  requireVerifiedEmailForTokens: boolean;
  /** Creating a PAT needs a password/TOTP re-authentication within reauthMaxAgeSeconds. */
  patRequireRecentReauth: boolean;
  reauthMaxAgeSeconds: number;
  /** JWT issuance needs `mfa_code` when the user has TOTP. */
  jwtRequireMfa: boolean;
  jwtAccessTtlSeconds: number;
  jwtRefreshTtlSeconds: number;
  sessionTtlSeconds: number;
}

export function readAccountSettings(env: Env): AccountSettings {
  return {
    requireVerifiedEmailForTokens: readBool(env, 'SERVICE_API_TOKEN_REQUIRE_VERIFIED_EMAIL', true),
    patRequireRecentReauth: readBool(env, 'SERVICE_PAT_REQUIRE_RECENT_REAUTH', true),
    reauthMaxAgeSeconds: readInt(env, 'SERVICE_REAUTH_MAX_AGE_SECONDS', 300, 10, 86400),
    jwtRequireMfa: readBool(env, 'SERVICE_JWT_REQUIRE_MFA', true),
    jwtAccessTtlSeconds: readInt(env, 'SERVICE_JWT_ACCESS_TTL_SECONDS', 900, 10, 86400),
    jwtRefreshTtlSeconds: readInt(env, 'SERVICE_JWT_REFRESH_TTL_SECONDS', 7 * 86400, 60, 365 * 86400),
    sessionTtlSeconds: readInt(env, 'SERVICE_SESSION_TTL_SECONDS', 14 * 86400, 300, 365 * 86400),
  };
}

/** Token lifetimes of the OAuth 2.0 server and its first-party CLI client (docs/oauth.md). */
export interface OAuthSettings {
  accessTokenTtlSeconds: number;
  /** From the refresh token's issue; every use rotates it (a new one with a fresh lifetime). */
  refreshTokenTtlSeconds: number;
  /** The built-in public device client `svc-cli` (docs/cli.md). */
  cliClientEnabled: boolean;
}

export function readOAuthSettings(env: Env): OAuthSettings {
  const accessTokenTtlSeconds = readInt(env, 'SERVICE_OAUTH_ACCESS_TTL_SECONDS', 3600, 1, 86400);
  const refreshTokenTtlSeconds = readInt(env, 'SERVICE_OAUTH_REFRESH_TTL_SECONDS', 30 * 86400, 60, 365 * 86400);
  // A refresh token that dies before its access token could never be used.
  if (refreshTokenTtlSeconds <= accessTokenTtlSeconds) {
    throw new ConfigError(
      `SERVICE_OAUTH_REFRESH_TTL_SECONDS (${refreshTokenTtlSeconds}) must exceed SERVICE_OAUTH_ACCESS_TTL_SECONDS (${accessTokenTtlSeconds})`,
    );
  }
  return {
    accessTokenTtlSeconds,
    refreshTokenTtlSeconds,
    cliClientEnabled: readBool(env, 'SERVICE_OAUTH_CLI_CLIENT_ENABLED', true),
  };
}
