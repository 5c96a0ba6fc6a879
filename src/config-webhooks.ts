// The webhooks capability's settings (docs/webhooks.md): delivery, retries, the SSRF guard, retention.
import { ConfigError, raw, readCidrs, readInt, readList, readSeconds, type Env } from './config-read.ts';

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
    throw new ConfigError(
      `SERVICE_WEBHOOKS_RETRY_DELAYS must be comma-separated seconds such as "0,30,120", got "${value}"`,
    );
  }
  return parts.map(Number);
}

function readDnsServers(env: Env): string[] {
  const servers = readList(env, 'SERVICE_DNS_SERVERS');
  for (const server of servers) {
    if (!/^(\d+\.\d+\.\d+\.\d+|\[[0-9a-fA-F:]+\])(:\d{1,5})?$/.test(server)) {
      throw new ConfigError(
        `SERVICE_DNS_SERVERS must list host:port addresses such as 127.0.0.1:5353, got "${server}"`,
      );
    }
  }
  return servers;
}

export function readWebhookSettings(env: Env): WebhookSettings {
  const maxRetries = readInt(env, 'SERVICE_WEBHOOKS_MAX_RETRIES', 6, 1, 100);
  const retryDelays = readRetryDelays(env);
  if (retryDelays.length < maxRetries) {
    throw new ConfigError(
      `SERVICE_WEBHOOKS_RETRY_DELAYS must give at least SERVICE_WEBHOOKS_MAX_RETRIES (${maxRetries}) delays, got ${retryDelays.length}`,
    );
  }
  const deliveryTimeoutMs = Math.round(readSeconds(env, 'SERVICE_WEBHOOKS_DELIVERY_TIMEOUT', 10, 0.05, 60) * 1000);
  const leaseSeconds = readInt(env, 'SERVICE_WEBHOOKS_LEASE_SECONDS', 60, 1, 3600);
  // A lease must outlive any attempt, or a second worker could claim a row still being attempted.
  if (leaseSeconds * 1000 <= deliveryTimeoutMs + 1000) {
    throw new ConfigError(
      `SERVICE_WEBHOOKS_LEASE_SECONDS (${leaseSeconds}) must exceed SERVICE_WEBHOOKS_DELIVERY_TIMEOUT by more than a second`,
    );
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
