// Fixed facts of the authorization server shared by its modules (no imports, so no cycles).
import type { IncomingMessage } from 'node:http';

export const AUTHORIZATION_CODE_TTL = 60;
export const DEVICE_CODE_TTL = 600;
export const GRANT_TTL = 365 * 86400;
export const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

export const OAUTH_ROUTES = {
  authorization: '/o/authorize/',
  token: '/o/token/',
  device_authorization: '/o/device-authorization/',
  code_verification: '/o/device/',
  registration: '/o/register/',
  revocation: '/o/revoke/',
  introspection: '/o/introspect/',
  jwks: '/o/jwks/',
} as const;

export const DEVICE_POLL_INTERVAL = 5;

export function interactionPath(uid: string): string {
  return `/o/interaction/${uid}/`;
}

/** The app-session user the mount hook found for this raw request (login prompt check, pages). */
const APP_USER = Symbol('svc app user');
export function setAppUser(req: IncomingMessage, userId: number | null) {
  (req as unknown as Record<symbol, number | null>)[APP_USER] = userId;
}
export function appUserOf(req: IncomingMessage): number | null | undefined {
  return (req as unknown as Record<symbol, number | null | undefined>)[APP_USER];
}

/**
 * The remote MCP endpoint's path. It is a protected resource of its own (RFC 8707 / RFC 9728):
 * BASE_URL + this path, and its access tokens are issued for that audience only.
 */
export const MCP_PATH = '/mcp';

/** The MCP endpoint's resource identifier, or null when SERVICE_MCP_ENABLED is off. */
export function mcpResourceOf(config: { baseUrl: string; mcpEnabled: boolean }): string | null {
  return config.mcpEnabled ? `${config.baseUrl}${MCP_PATH}` : null;
}
