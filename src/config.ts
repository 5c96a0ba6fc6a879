// Every setting of the service, read once from the environment, typed and validated.
// A bad value stops the process with a message that names the variable (ConfigError).
// Each setting is documented in the README's settings table; test/config.test.ts checks that
// every variable named here appears there.
import fs from 'node:fs';
import path from 'node:path';
import ipaddr from 'ipaddr.js';

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

export type NodeEnv = 'development' | 'production' | 'test';

export interface RateSpec {
  limit: number;
  windowSeconds: number;
}

export interface Config {
  nodeEnv: NodeEnv;
  port: number;
  host: string;
  baseUrl: string;
  dataDir: string;
  databaseUrl: string;
  /** How long a SQLite write waits for the write lock while no other process commits (SERVICE_SQLITE_BUSY_TIMEOUT_MS). */
  sqliteBusyTimeoutMs: number;
  /** null until resolved by ensureSecrets() in development/test; always set in production. */
  secretKey: string | null;
  logLevel: string;
  bodyLimitBytes: number;
  apiDocsPublic: boolean;
  extraScopes: string[];
  patEmptyScopesFullAccess: boolean;
  redisUrl: string | null;
  /** Prefix of every Redis key the service writes, so several deployments can share one Redis. */
  redisKeyPrefix: string;
  throttleAnon: RateSpec;
  throttleUser: RateSpec;
  throttleAuth: RateSpec;
  trustedProxies: string[];
  idempotencyTtlHours: number;
  webhooksEnabled: boolean;
  /** RFC 7591 dynamic client registration at POST /o/register/ (DCR_ENABLED). */
  dcrEnabled: boolean;
  /** The remote MCP server at /mcp and its protected resource metadata (SERVICE_MCP_ENABLED). */
  mcpEnabled: boolean;
  oauth: OAuthSettings;
  accounts: AccountSettings;
  webhooks: WebhookSettings;
  /** Lifetime of a team invitation's accept link (SERVICE_INVITATION_TTL_SECONDS). */
  invitationTtlSeconds: number;
  /** Audit-log entries older than this many days are purged (SERVICE_AUDIT_RETENTION_DAYS, at least 30). */
  auditRetentionDays: number;
  /** null: development file transport (`<dataDir>/mail/*.eml`); else an smtp:// or smtps:// URL. */
  emailUrl: string | null;
  emailFrom: string;
  mailproviderWebhookEnabled: boolean;
  mailproviderTopicArn: string | null;
  mailproviderTrustAnchorsFile: string | null;
  metrics: MetricsSettings;
}

function raw(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

export function readString(env: Env, name: string, fallback: string): string {
  return raw(env, name) ?? fallback;
}

export function readBool(env: Env, name: string, fallback: boolean): boolean {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  const lowered = value.toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(lowered)) return true;
  if (['0', 'false', 'no', 'off'].includes(lowered)) return false;
  throw new ConfigError(`${name} must be true or false, got "${value}"`);
}

export function readInt(env: Env, name: string, fallback: number, min: number, max: number): number {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  if (!/^-?\d+$/.test(value)) throw new ConfigError(`${name} must be an integer, got "${value}"`);
  const parsed = Number(value);
  if (parsed < min || parsed > max) {
    throw new ConfigError(`${name} must be between ${min} and ${max}, got ${parsed}`);
  }
  return parsed;
}

export function readList(env: Env, name: string): string[] {
  const value = raw(env, name);
  if (value === undefined) return [];
  return value.split(/[\s,]+/).filter(Boolean);
}

const RATE_UNITS: Record<string, number> = { second: 1, minute: 60, hour: 3600, day: 86400 };

export function readRate(env: Env, name: string, fallback: string): RateSpec {
  const value = raw(env, name) ?? fallback;
  // At most 15 digits: the limit is sent as the `q` of RateLimit-Policy, a structured-field Integer.
  const match = /^(\d{1,15})\/(second|minute|hour|day)$/.exec(value);
  if (!match || Number(match[1]) < 1) {
    throw new ConfigError(`${name} must look like "100/hour" (a count of 1 to 15 digits; units: second, minute, hour, day), got "${value}"`);
  }
  return { limit: Number(match[1]), windowSeconds: RATE_UNITS[match[2]] };
}

function readNodeEnv(env: Env): NodeEnv {
  const value = raw(env, 'NODE_ENV') ?? 'development';
  if (value !== 'development' && value !== 'production' && value !== 'test') {
    throw new ConfigError(`NODE_ENV must be development, production or test, got "${value}"`);
  }
  return value;
}

function readBaseUrl(env: Env, port: number): string {
  const value = raw(env, 'BASE_URL') ?? `http://localhost:${port}`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`BASE_URL must be an absolute http(s) URL, got "${value}"`);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.search || url.hash || url.username) {
    throw new ConfigError(`BASE_URL must be an absolute http(s) URL without query, fragment or credentials, got "${value}"`);
  }
  // Stored without a trailing slash: paths are appended to it and it is the OAuth issuer.
  return url.toString().replace(/\/+$/, '');
}

function readDatabaseUrl(env: Env, dataDir: string): string {
  const value = raw(env, 'DATABASE_URL');
  if (value === undefined) return `sqlite:${path.join(dataDir, 'service.sqlite3')}`;
  if (/^sqlite:.+/.test(value) || /^postgres(ql)?:\/\/.+/.test(value)) return value;
  throw new ConfigError(
    `DATABASE_URL must be sqlite:<path>, sqlite::memory: or postgres://…, got "${value.replace(/:[^:@/]*@/, ':***@')}"`,
  );
}

function readSecretKey(env: Env, nodeEnv: NodeEnv): string | null {
  const value = raw(env, 'SECRET_KEY');
  if (value === undefined) {
    if (nodeEnv === 'production') throw new ConfigError('SECRET_KEY is required when NODE_ENV=production');
    return null;
  }
  if (value.length < 32) throw new ConfigError('SECRET_KEY must be at least 32 characters long');
  return value;
}

function readRedisKeyPrefix(env: Env): string {
  const value = raw(env, 'REDIS_KEY_PREFIX') ?? 'svc:';
  if (!/^[A-Za-z0-9_:.-]{1,64}$/.test(value)) {
    throw new ConfigError(`REDIS_KEY_PREFIX must be 1 to 64 letters, digits or _ : . -, got "${value}"`);
  }
  return value;
}

/** Proxy addresses or CIDR ranges (IPv4 or IPv6) whose X-Forwarded-For is believed. */
function readTrustedProxies(env: Env): string[] {
  const entries = readList(env, 'SERVICE_TRUSTED_PROXIES');
  for (const entry of entries) {
    if (!ipaddr.isValid(entry) && !ipaddr.isValidCIDR(entry)) {
      throw new ConfigError(`SERVICE_TRUSTED_PROXIES has "${entry}", which is neither an IP address nor a CIDR range`);
    }
  }
  return entries;
}

function readRedisUrl(env: Env): string | null {
  const value = raw(env, 'REDIS_URL');
  if (value === undefined) return null;
  if (!/^rediss?:\/\/.+/.test(value)) throw new ConfigError(`REDIS_URL must be redis://… or rediss://…`);
  return value;
}

export function loadConfig(env: Env = process.env): Config {
  const nodeEnv = readNodeEnv(env);
  const production = nodeEnv === 'production';
  const port = readInt(env, 'PORT', 8000, 0, 65535);
  const dataDir = path.resolve(readString(env, 'SERVICE_DATA_DIR', './data'));
  return {
    nodeEnv,
    port,
    host: readString(env, 'HOST', production ? '0.0.0.0' : '127.0.0.1'),
    baseUrl: readBaseUrl(env, port),
    dataDir,
    databaseUrl: readDatabaseUrl(env, dataDir),
    // At most a minute: a request may wait up to six times this while other processes commit.
    sqliteBusyTimeoutMs: readInt(env, 'SERVICE_SQLITE_BUSY_TIMEOUT_MS', 5000, 1, 60_000),
    secretKey: readSecretKey(env, nodeEnv),
    logLevel: readLogLevel(env, nodeEnv),
    bodyLimitBytes: readInt(env, 'SERVICE_BODY_LIMIT_BYTES', 1024 * 1024, 1024, 100 * 1024 * 1024),
    apiDocsPublic: readBool(env, 'SERVICE_API_DOCS_PUBLIC', !production),
    extraScopes: readExtraScopes(env),
    patEmptyScopesFullAccess: readBool(env, 'SERVICE_PAT_EMPTY_SCOPES_FULL_ACCESS', true),
    redisUrl: readRedisUrl(env),
    throttleAnon: readRate(env, 'SERVICE_THROTTLE_ANON', '100/hour'),
    throttleUser: readRate(env, 'SERVICE_THROTTLE_USER', '1000/hour'),
    throttleAuth: readRate(env, 'SERVICE_THROTTLE_AUTH', '30/minute'),
    redisKeyPrefix: readRedisKeyPrefix(env),
    trustedProxies: readTrustedProxies(env),
    idempotencyTtlHours: readInt(env, 'SERVICE_IDEMPOTENCY_TTL_HOURS', 24, 1, 24 * 365),
    webhooksEnabled: readBool(env, 'SERVICE_WEBHOOKS_ENABLED', false),
    dcrEnabled: readBool(env, 'DCR_ENABLED', !production),
    mcpEnabled: readBool(env, 'SERVICE_MCP_ENABLED', true),
    oauth: readOAuthSettings(env),
    accounts: readAccountSettings(env),
    webhooks: readWebhookSettings(env),
    invitationTtlSeconds: readInt(env, 'SERVICE_INVITATION_TTL_SECONDS', 7 * 24 * 3600, 1, 90 * 24 * 3600),
    auditRetentionDays: readInt(env, 'SERVICE_AUDIT_RETENTION_DAYS', 365, 30, 36500),
    emailUrl: readEmailUrl(env),
    emailFrom: readEmailFrom(env),
    mailproviderWebhookEnabled: readBool(env, 'SERVICE_MAILPROVIDER_WEBHOOK_ENABLED', false),
    mailproviderTopicArn: readTopicArn(env),
    mailproviderTrustAnchorsFile: readTrustAnchorsFile(env),
    metrics: readMetricsSettings(env),
  };
}

function readLogLevel(env: Env, nodeEnv: NodeEnv): string {
  const value = raw(env, 'LOG_LEVEL') ?? (nodeEnv === 'test' ? 'silent' : 'info');
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(value)) {
    throw new ConfigError(`LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "${value}"`);
  }
  return value;
}

function readExtraScopes(env: Env): string[] {
  const scopes = readList(env, 'SERVICE_EXTRA_SCOPES');
  for (const scope of scopes) {
    if (!/^[a-z][a-z0-9_.:-]{0,63}$/.test(scope)) {
      throw new ConfigError(`SERVICE_EXTRA_SCOPES has an invalid scope name "${scope}" (lowercase letters, digits, _ . : -)`);
    }
  }
  return scopes;
}

function readEmailUrl(env: Env): string | null {
  const value = raw(env, 'SERVICE_EMAIL_URL');
  if (value === undefined) return null;
  // SES is reached through its SMTP endpoint (docs/mail.md): nodemailer's SES transport would pull in the AWS SDK.
  if (!/^smtps?:\/\/[^/\s]+/.test(value)) {
    throw new ConfigError('SERVICE_EMAIL_URL must be smtp://… or smtps://… (for Amazon SES use its SMTP endpoint, see docs/mail.md)');
  }
  return value;
}

function readEmailFrom(env: Env): string {
  const value = raw(env, 'SERVICE_EMAIL_FROM') ?? 'svc <no-reply@localhost>';
  // One address, optionally with a display name: `Name <a@b.c>` or `a@b.c`.
  if (!/^([^<>@\r\n]*<[^<>\s@]+@[^<>\s@]+>|[^<>\s@]+@[^<>\s@]+)$/.test(value)) {
    throw new ConfigError(`SERVICE_EMAIL_FROM must be an address like "Example <no-reply@example.com>", got "${value}"`);
  }
  return value;
}

function readTopicArn(env: Env): string | null {
  const value = raw(env, 'SERVICE_MAILPROVIDER_TOPIC_ARN');
  if (value === undefined) return null;
  if (!/^arn:aws(-cn|-us-gov)?:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}(\.fifo)?$/.test(value)) {
    throw new ConfigError(`SERVICE_MAILPROVIDER_TOPIC_ARN must be an SNS topic ARN (arn:aws:sns:<region>:<account>:<name>), got "${value}"`);
  }
  return value;
}

function readTrustAnchorsFile(env: Env): string | null {
  const value = raw(env, 'SERVICE_MAILPROVIDER_TRUST_ANCHORS_FILE');
  if (value === undefined) return null;
  const file = path.resolve(value);
  if (!fs.existsSync(file)) throw new ConfigError(`SERVICE_MAILPROVIDER_TRUST_ANCHORS_FILE: no file at ${file}`);
  return file;
}

/** Prometheus metrics (docs/operations.md, "Monitoring"). */
export interface MetricsSettings {
  /** The bearer token GET /metrics asks for; null: no metrics endpoint (404). */
  token: string | null;
  /** The port on which `svc worker` serves its own metrics; null: none. */
  workerPort: number | null;
}

function readMetricsSettings(env: Env): MetricsSettings {
  const token = raw(env, 'SERVICE_METRICS_TOKEN') ?? null;
  // An RFC 6750 bearer token (the characters a header carries unquoted), long enough not to be guessed.
  if (token !== null && !/^[A-Za-z0-9._~+/-]{16,256}=*$/.test(token)) {
    throw new ConfigError('SERVICE_METRICS_TOKEN must be 16 to 256 letters, digits or - . _ ~ + / (e.g. openssl rand -hex 32)');
  }
  const workerPort = raw(env, 'SERVICE_WORKER_METRICS_PORT') === undefined ? null : readInt(env, 'SERVICE_WORKER_METRICS_PORT', 0, 0, 65535);
  if (workerPort !== null && token === null) throw new ConfigError('SERVICE_WORKER_METRICS_PORT needs SERVICE_METRICS_TOKEN (the token its /metrics asks for)');
  return { token, workerPort };
}

/** Token lifetimes of the OAuth 2.0 server and its first-party CLI client (docs/oauth.md). */
export interface OAuthSettings {
  accessTokenTtlSeconds: number;
  /** From the refresh token's issue; every use rotates it (a new one with a fresh lifetime). */
  refreshTokenTtlSeconds: number;
  /** The built-in public device client `svc-cli` (docs/cli.md). */
  cliClientEnabled: boolean;
}

function readOAuthSettings(env: Env): OAuthSettings {
  const accessTokenTtlSeconds = readInt(env, 'SERVICE_OAUTH_ACCESS_TTL_SECONDS', 3600, 1, 86400);
  const refreshTokenTtlSeconds = readInt(env, 'SERVICE_OAUTH_REFRESH_TTL_SECONDS', 30 * 86400, 60, 365 * 86400);
  // A refresh token that dies before its access token could never be used.
  if (refreshTokenTtlSeconds <= accessTokenTtlSeconds) {
    throw new ConfigError(`SERVICE_OAUTH_REFRESH_TTL_SECONDS (${refreshTokenTtlSeconds}) must exceed SERVICE_OAUTH_ACCESS_TTL_SECONDS (${accessTokenTtlSeconds})`);
  }
  return { accessTokenTtlSeconds, refreshTokenTtlSeconds, cliClientEnabled: readBool(env, 'SERVICE_OAUTH_CLI_CLIENT_ENABLED', true) };
}

/** Webhook delivery settings (docs/webhooks.md). */
export interface WebhookSettings {
  maxSubscriptionsPerTeam: number;
  /** Seconds before attempt 1, 2, … (attempt 1 is normally immediate). */
  retryDelays: number[];
  maxRetries: number;
  deliveryTimeoutMs: number;
  autoDisableAfter: number;
  leaseSeconds: number;
  concurrency: number;
  /** Networks the SSRF guard lets through (development and tests only). */
  allowedCidrs: string[];
  /** `host:port` DNS servers for the SSRF guard's resolver; empty = the system resolver. */
  dnsServers: string[];
  secretOverlapHours: number;
  logRetentionDays: number;
}

function readRetryDelays(env: Env): number[] {
  const value = raw(env, 'SERVICE_WEBHOOKS_RETRY_DELAYS') ?? '0,30,120,900,3600,14400';
  const parts = value.split(',').map((part) => part.trim());
  if (parts.length === 0 || parts.some((part) => !/^\d{1,7}(\.\d{1,3})?$/.test(part))) {
    throw new ConfigError(`SERVICE_WEBHOOKS_RETRY_DELAYS must be comma-separated seconds such as "0,30,120", got "${value}"`);
  }
  return parts.map(Number);
}

function readCidrs(env: Env, name: string): string[] {
  const cidrs = readList(env, name);
  for (const cidr of cidrs) {
    const match = /^([0-9a-fA-F:.]+)\/(\d{1,3})$/.exec(cidr);
    const ok = match && (/^\d+\.\d+\.\d+\.\d+$/.test(match[1]) ? Number(match[2]) <= 32 : match[1].includes(':') && Number(match[2]) <= 128);
    if (!ok) throw new ConfigError(`${name} must list CIDRs such as 127.0.0.2/32, got "${cidr}"`);
  }
  return cidrs;
}

function readDnsServers(env: Env): string[] {
  const servers = readList(env, 'SERVICE_DNS_SERVERS');
  for (const server of servers) {
    if (!/^(\d+\.\d+\.\d+\.\d+|\[[0-9a-fA-F:]+\])(:\d{1,5})?$/.test(server)) {
      throw new ConfigError(`SERVICE_DNS_SERVERS must list host:port addresses such as 127.0.0.1:5353, got "${server}"`);
    }
  }
  return servers;
}

function readWebhookSettings(env: Env): WebhookSettings {
  const maxRetries = readInt(env, 'SERVICE_WEBHOOKS_MAX_RETRIES', 6, 1, 100);
  const retryDelays = readRetryDelays(env);
  if (retryDelays.length < maxRetries) {
    throw new ConfigError(`SERVICE_WEBHOOKS_RETRY_DELAYS must give at least SERVICE_WEBHOOKS_MAX_RETRIES (${maxRetries}) delays, got ${retryDelays.length}`);
  }
  const deliveryTimeoutMs = Math.round(readSeconds(env, 'SERVICE_WEBHOOKS_DELIVERY_TIMEOUT', 10, 0.05, 60) * 1000);
  const leaseSeconds = readInt(env, 'SERVICE_WEBHOOKS_LEASE_SECONDS', 60, 1, 3600);
  // A lease must outlive any attempt, or a second worker could claim a row still being attempted.
  if (leaseSeconds * 1000 <= deliveryTimeoutMs + 1000) {
    throw new ConfigError(`SERVICE_WEBHOOKS_LEASE_SECONDS (${leaseSeconds}) must exceed SERVICE_WEBHOOKS_DELIVERY_TIMEOUT by more than a second`);
  }
  return {
    maxSubscriptionsPerTeam: readInt(env, 'SERVICE_WEBHOOKS_MAX_SUBSCRIPTIONS_PER_TEAM', 10, 1, 1000),
    retryDelays,
    maxRetries,
    deliveryTimeoutMs,
    autoDisableAfter: readInt(env, 'SERVICE_WEBHOOKS_AUTO_DISABLE_AFTER', 50, 1, 100000),
    leaseSeconds,
    concurrency: readInt(env, 'SERVICE_WEBHOOKS_CONCURRENCY', 50, 1, 1000),
    allowedCidrs: readCidrs(env, 'SERVICE_WEBHOOKS_ALLOWED_CIDRS'),
    dnsServers: readDnsServers(env),
    secretOverlapHours: readInt(env, 'SERVICE_WEBHOOKS_SECRET_OVERLAP_HOURS', 24, 0, 24 * 30),
    logRetentionDays: readInt(env, 'SERVICE_WEBHOOKS_LOG_RETENTION_DAYS', 30, 1, 3650),
  };
}

function readSeconds(env: Env, name: string, fallback: number, min: number, max: number): number {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  if (!/^\d+(\.\d+)?$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new ConfigError(`${name} must be a number of seconds between ${min} and ${max}, got "${value}"`);
  }
  return Number(value);
}

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

function readAccountSettings(env: Env): AccountSettings {
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
