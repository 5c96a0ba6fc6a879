// The credentials a command runs with, and the typed client made from them. The environment
// overrides the file: SVC_TOKEN (a token) and SVC_URL (the server); otherwise the profile's entry in
// hosts.json. An OAuth access token that has expired, or that the server refuses, is refreshed with
// the refresh token (rotated: the new pair replaces the old one in the file); when that fails, the
// command ends with exit 4 and says to log in again.
import { createClient, type SvcClient } from 'svc-client';
import { AuthRequired, UsageError } from './failures.ts';
import { readHosts, withLock, writeHosts, type Profile } from './hosts.ts';
import type { Io } from './io.ts';
import { OAuthError, refreshTokens } from './oauth.ts';
import { VERSION } from './version.ts';

export const DEFAULT_SERVER = 'http://localhost:8000';
// Refreshed this long before it expires, so that it does not expire on the way.
const EXPIRY_MARGIN_MS = 5_000;

export interface Session {
  server: string;
  /** `env` when SVC_TOKEN supplied the token. */
  source: 'env' | 'file';
  profile: Profile | null;
  client: SvcClient;
}

export function normaliseServer(url: string): string {
  const parsed = URL.parse(url);
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:'))
    throw new UsageError(`the server must be an http(s) URL, not "${url}"`);
  return parsed.origin;
}

/** The server a command talks to: SVC_URL, else the profile's, else the default. */
export function serverOf(io: Io, profile: Profile | undefined): string {
  return normaliseServer(io.env.SVC_URL || profile?.url || DEFAULT_SERVER);
}

const expired = (profile: Profile) =>
  profile.expires_at !== undefined && Date.parse(profile.expires_at) - EXPIRY_MARGIN_MS <= Date.now();

/** Profile data from a token answer (expires_at from expires_in). */
export function withTokens(
  profile: Profile,
  tokens: { access_token: string; refresh_token?: string; expires_in?: number; scope?: string },
): Profile {
  return {
    ...profile,
    access_token: tokens.access_token,
    refresh_token: tokens.refresh_token ?? profile.refresh_token,
    expires_at: tokens.expires_in ? new Date(Date.now() + tokens.expires_in * 1000).toISOString() : undefined,
    scope: tokens.scope ?? profile.scope,
  };
}

async function refresh(dir: string, name: string, stale: Profile): Promise<Profile> {
  return withLock(dir, async () => {
    const hosts = readHosts(dir);
    const latest = hosts.profiles[name];
    if (!latest?.refresh_token) throw new AuthRequired(`not logged in to ${stale.url}: run \`svc-cli login\``);
    // Another svc-cli refreshed while this one waited for the lock: its pair is the current one.
    if (latest.access_token !== stale.access_token && !expired(latest)) return latest;
    let tokens;
    try {
      tokens = await refreshTokens(latest.url, latest.refresh_token);
    } catch (error) {
      if (error instanceof OAuthError) {
        throw new AuthRequired(
          `the login to ${latest.url} has expired or was revoked (${error.error}): run \`svc-cli login\``,
        );
      }
      throw error;
    }
    const updated = withTokens(latest, tokens);
    hosts.profiles[name] = updated;
    writeHosts(dir, hosts);
    return updated;
  });
}

export function openSession(io: Io, dir: string, name: string): Session {
  const stored = readHosts(dir).profiles[name];
  const server = serverOf(io, stored);
  const envToken = io.env.SVC_TOKEN?.trim();
  const client = (token: Parameters<typeof createClient>[0]['token'], onUnauthorized?: () => Promise<boolean>) =>
    createClient({ baseUrl: server, token, onUnauthorized, userAgent: `svc-cli/${VERSION}` });
  if (envToken) return { server, source: 'env', profile: stored ?? null, client: client(envToken) };
  if (!stored || (io.env.SVC_URL && normaliseServer(stored.url) !== server)) {
    throw new AuthRequired(
      `not logged in to ${server}: run \`svc-cli login${name === 'default' ? '' : ` --profile ${name}`}\` (or set SVC_TOKEN)`,
    );
  }
  let current = stored;
  const refreshable = current.auth === 'oauth' && current.refresh_token !== undefined;
  const session: Session = {
    server,
    source: 'file',
    profile: current,
    client: client(
      async () => {
        if (refreshable && expired(current)) current = await refresh(dir, name, current);
        session.profile = current;
        return current.access_token;
      },
      async () => {
        if (!refreshable) return false;
        current = await refresh(dir, name, { ...current, expires_at: new Date(0).toISOString() });
        session.profile = current;
        return true;
      },
    ),
  };
  return session;
}
