// Every setting of the service, read once from the environment, typed and validated.
// A bad value stops the process with a message that names the variable (ConfigError).
// Each setting is documented in the README's settings table; test/config.test.ts checks that
// every variable named here and in the capability files (config-*.ts) appears there.
import path from 'node:path';
import ipaddr from 'ipaddr.js';
import { readAccountSettings, readOAuthSettings, type AccountSettings, type OAuthSettings } from './config-accounts.ts';
import { readEmailFrom, readEmailUrl, readTopicArn, readTrustAnchorsFile } from './config-mail.ts';
import { readMetricsSettings, type MetricsSettings } from './config-metrics.ts';
import {
  ConfigError,
  raw,
  readBool,
  readInt,
  readList,
  readRate,
  readString,
  type Env,
  type RateSpec,
} from './config-read.ts';
import { readWebhookSettings, type WebhookSettings } from './config-webhooks.ts';

export { ConfigError, type RateSpec } from './config-read.ts';
export type { AccountSettings, OAuthSettings } from './config-accounts.ts';
export type { MetricsSettings } from './config-metrics.ts';
export type { WebhookSettings } from './config-webhooks.ts';

export type NodeEnv = 'development' | 'production' | 'test';

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
  /** Mail-provider events stored longer ago than this many days are purged (SERVICE_MAIL_EVENTS_RETENTION_DAYS). */
  mailEventsRetentionDays: number;
  /** null: development file transport (`<dataDir>/mail/*.eml`); else an smtp:// or smtps:// URL. */
  emailUrl: string | null;
  emailFrom: string;
  mailproviderWebhookEnabled: boolean;
  mailproviderTopicArn: string | null;
  mailproviderTrustAnchorsFile: string | null;
  metrics: MetricsSettings;
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
    throw new ConfigError(
      `BASE_URL must be an absolute http(s) URL without query, fragment or credentials, got "${value}"`,
    );
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
    mailEventsRetentionDays: readInt(env, 'SERVICE_MAIL_EVENTS_RETENTION_DAYS', 90, 1, 36500),
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
      throw new ConfigError(
        `SERVICE_EXTRA_SCOPES has an invalid scope name "${scope}" (lowercase letters, digits, _ . : -)`,
      );
    }
  }
  return scopes;
}
