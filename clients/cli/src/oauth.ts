// The OAuth 2.0 requests of svc-cli, with the service's built-in public client `svc-cli`
// (docs/oauth.md): device authorization (RFC 8628), polling the token endpoint, refresh, revocation.
// These endpoints are the authorization server's, form-encoded and outside the OpenAPI document, so
// they are plain fetch calls rather than typed-client calls.
import { VERSION } from './version.ts';

export const CLIENT_ID = 'svc-cli';
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

export interface DeviceAuthorization {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete?: string;
  expires_in: number;
  interval?: number;
}

export interface TokenSet {
  access_token: string;
  refresh_token?: string;
  expires_in?: number;
  scope?: string;
  token_type: string;
}

/** An OAuth error answer: `{error, error_description}`. */
export class OAuthError extends Error {
  readonly error: string;
  readonly status: number;
  constructor(status: number, error: string, description: string | undefined) {
    super(description ? `${error}: ${description}` : error);
    this.error = error;
    this.status = status;
  }
}

async function postForm<T>(url: string, form: Record<string, string>): Promise<T> {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/x-www-form-urlencoded',
      Accept: 'application/json',
      'User-Agent': `svc-cli/${VERSION}`,
    },
    body: new URLSearchParams(form),
  });
  const text = await res.text();
  let body: Record<string, unknown> = {};
  try {
    body = text ? JSON.parse(text) : {};
  } catch {
    // Not JSON (a proxy's error page): reported by status below.
  }
  if (!res.ok) {
    const error =
      typeof body.error === 'string' ? body.error : typeof body.title === 'string' ? body.title : `HTTP ${res.status}`;
    const description =
      typeof body.error_description === 'string'
        ? body.error_description
        : typeof body.detail === 'string'
          ? body.detail
          : undefined;
    throw new OAuthError(res.status, error, description);
  }
  return body as T;
}

export function startDeviceAuthorization(server: string, scopes: string | undefined): Promise<DeviceAuthorization> {
  return postForm(`${server}/o/device-authorization/`, { client_id: CLIENT_ID, ...(scopes ? { scope: scopes } : {}) });
}

export function pollDeviceToken(server: string, deviceCode: string): Promise<TokenSet> {
  return postForm(`${server}/o/token/`, { grant_type: DEVICE_GRANT, device_code: deviceCode, client_id: CLIENT_ID });
}

export function refreshTokens(server: string, refreshToken: string): Promise<TokenSet> {
  return postForm(`${server}/o/token/`, {
    grant_type: 'refresh_token',
    refresh_token: refreshToken,
    client_id: CLIENT_ID,
  });
}

/** RFC 7009: the service ends the whole authorization when either token is revoked. */
export async function revokeToken(
  server: string,
  token: string,
  hint: 'access_token' | 'refresh_token',
): Promise<void> {
  await postForm(`${server}/o/revoke/`, { token, token_type_hint: hint, client_id: CLIENT_ID });
}
