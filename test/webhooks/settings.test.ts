import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { startApp } from '../support/app.ts';

describe('webhook settings', () => {
  it('defaults follow the spec', () => {
    const { webhooks } = loadConfig({});
    assert.deepEqual(webhooks, {
      maxSubscriptionsPerTeam: 10,
      retryDelays: [0, 30, 120, 900, 3600, 14400],
      maxRetries: 6,
      deliveryTimeoutMs: 10_000,
      autoDisableAfter: 50,
      leaseSeconds: 60,
      concurrency: 50,
      allowedCidrs: [],
      dnsServers: [],
      secretOverlapHours: 24,
      logRetentionDays: 30,
    });
  });

  it('reads and validates each variable, naming it on error', () => {
    const ok = loadConfig({
      SERVICE_WEBHOOKS_RETRY_DELAYS: '0, 0.5,1',
      SERVICE_WEBHOOKS_MAX_RETRIES: '3',
      SERVICE_WEBHOOKS_ALLOWED_CIDRS: '127.0.0.2/32, ::1/128',
      SERVICE_DNS_SERVERS: '127.0.0.1:5353,[::1]:53',
      SERVICE_WEBHOOKS_DELIVERY_TIMEOUT: '2.5',
      SERVICE_WEBHOOKS_LEASE_SECONDS: '5',
    }).webhooks;
    assert.deepEqual(ok.retryDelays, [0, 0.5, 1]);
    assert.equal(ok.deliveryTimeoutMs, 2500);
    assert.deepEqual(ok.allowedCidrs, ['127.0.0.2/32', '::1/128']);
    assert.deepEqual(ok.dnsServers, ['127.0.0.1:5353', '[::1]:53']);
    const bad: [Record<string, string>, string][] = [
      [{ SERVICE_WEBHOOKS_RETRY_DELAYS: '0,abc' }, 'SERVICE_WEBHOOKS_RETRY_DELAYS'],
      [{ SERVICE_WEBHOOKS_RETRY_DELAYS: '0,30' }, 'SERVICE_WEBHOOKS_RETRY_DELAYS'],
      [{ SERVICE_WEBHOOKS_MAX_RETRIES: '0' }, 'SERVICE_WEBHOOKS_MAX_RETRIES'],
      [{ SERVICE_WEBHOOKS_ALLOWED_CIDRS: '10.0.0.0' }, 'SERVICE_WEBHOOKS_ALLOWED_CIDRS'],
      [{ SERVICE_WEBHOOKS_ALLOWED_CIDRS: '10.0.0.0/33' }, 'SERVICE_WEBHOOKS_ALLOWED_CIDRS'],
      [{ SERVICE_DNS_SERVERS: 'dns.example.com:53' }, 'SERVICE_DNS_SERVERS'],
      [{ SERVICE_WEBHOOKS_DELIVERY_TIMEOUT: '-1' }, 'SERVICE_WEBHOOKS_DELIVERY_TIMEOUT'],
      [{ SERVICE_WEBHOOKS_LEASE_SECONDS: '10' }, 'SERVICE_WEBHOOKS_LEASE_SECONDS'],
      [{ SERVICE_WEBHOOKS_CONCURRENCY: '0' }, 'SERVICE_WEBHOOKS_CONCURRENCY'],
      [{ SERVICE_WEBHOOKS_MAX_SUBSCRIPTIONS_PER_TEAM: 'ten' }, 'SERVICE_WEBHOOKS_MAX_SUBSCRIPTIONS_PER_TEAM'],
      [{ SERVICE_WEBHOOKS_AUTO_DISABLE_AFTER: '0' }, 'SERVICE_WEBHOOKS_AUTO_DISABLE_AFTER'],
      [{ SERVICE_WEBHOOKS_SECRET_OVERLAP_HOURS: '-2' }, 'SERVICE_WEBHOOKS_SECRET_OVERLAP_HOURS'],
      [{ SERVICE_WEBHOOKS_LOG_RETENTION_DAYS: '0' }, 'SERVICE_WEBHOOKS_LOG_RETENTION_DAYS'],
    ];
    for (const [env, name] of bad) {
      assert.throws(
        () => loadConfig(env),
        (error: Error) => error instanceof ConfigError && error.message.includes(name),
        JSON.stringify(env),
      );
    }
  });

  it('the OpenAPI document lists every webhook operation', async () => {
    const t = await startApp();
    try {
      const res = await t.inject({ url: '/api/schema/' });
      assert.equal(res.statusCode, 200);
      const paths = Object.keys(res.json().paths);
      for (const path of [
        '/api/v1/teams/{team_id}/webhooks/',
        '/api/v1/teams/{team_id}/webhooks/{id}/',
        '/api/v1/teams/{team_id}/webhooks/{id}/rotate-secret/',
        '/api/v1/teams/{team_id}/webhooks/{id}/logs/',
        '/api/v1/teams/{team_id}/webhooks/{id}/logs/{log_id}/retry/',
        '/api/v1/teams/{team_id}/webhooks/{id}/test/',
      ]) {
        assert.ok(paths.includes(path), path);
      }
    } finally {
      await t.close();
    }
  });
});
