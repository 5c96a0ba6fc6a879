// Settings: read from the environment, typed, validated; a bad value is an error naming the variable;
// every variable config.ts and its capability files (config-*.ts) read is documented in the README's
// settings table. What `svc serve` does with bad settings: config-processes.test.ts.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../src/config.ts';
import { ROOT } from './cli/cli-helpers.ts';

describe('loadConfig', () => {
  it('development defaults', () => {
    const config = loadConfig({});
    assert.equal(config.nodeEnv, 'development');
    assert.equal(config.port, 8000);
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.baseUrl, 'http://localhost:8000');
    assert.equal(config.dataDir, path.resolve('./data'));
    assert.equal(config.databaseUrl, `sqlite:${path.resolve('./data/service.sqlite3')}`);
    assert.equal(config.secretKey, null, 'generated into the data directory later');
    assert.equal(config.logLevel, 'info');
    assert.equal(config.bodyLimitBytes, 1024 * 1024);
    assert.equal(config.apiDocsPublic, true);
    assert.equal(config.patEmptyScopesFullAccess, true);
    assert.deepEqual(config.extraScopes, []);
    assert.equal(config.redisUrl, null);
    assert.equal(config.mcpEnabled, true);
    assert.equal(loadConfig({ SERVICE_MCP_ENABLED: 'false' }).mcpEnabled, false);
  });

  it('BASE_URL follows PORT by default and loses its trailing slash', () => {
    assert.equal(loadConfig({ PORT: '9001' }).baseUrl, 'http://localhost:9001');
    assert.equal(loadConfig({ BASE_URL: 'https://api.example.com/' }).baseUrl, 'https://api.example.com');
    assert.equal(loadConfig({ BASE_URL: 'https://example.com/svc/' }).baseUrl, 'https://example.com/svc');
  });

  it('DATABASE_URL: SQLite file, in-memory SQLite, PostgreSQL', () => {
    const dir = path.resolve('/tmp/somewhere');
    assert.equal(loadConfig({ SERVICE_DATA_DIR: dir }).databaseUrl, `sqlite:${dir}/service.sqlite3`);
    for (const url of [
      'sqlite:/var/lib/svc/db.sqlite3',
      'sqlite::memory:',
      'postgres://u:p@db:5432/svc',
      'postgresql://db/svc',
    ]) {
      assert.equal(loadConfig({ DATABASE_URL: url }).databaseUrl, url);
    }
  });

  it('production: SECRET_KEY required; docs off and all interfaces by default', () => {
    assert.throws(
      () => loadConfig({ NODE_ENV: 'production' }),
      (error: Error) => error instanceof ConfigError && /SECRET_KEY/.test(error.message),
    );
    const config = loadConfig({ NODE_ENV: 'production', SECRET_KEY: 'k'.repeat(40) });
    assert.equal(config.secretKey, 'k'.repeat(40));
    assert.equal(config.apiDocsPublic, false);
    assert.equal(config.host, '0.0.0.0');
  });

  it('test mode logs nothing by default', () => {
    assert.equal(loadConfig({ NODE_ENV: 'test' }).logLevel, 'silent');
  });

  it('an empty value counts as unset', () => {
    assert.equal(loadConfig({ PORT: '', SERVICE_PAT_EMPTY_SCOPES_FULL_ACCESS: ' ' }).port, 8000);
  });

  it('booleans accept true/false, 1/0, yes/no, on/off', () => {
    for (const yes of ['true', 'TRUE', '1', 'yes', 'on'])
      assert.equal(loadConfig({ SERVICE_PAT_EMPTY_SCOPES_FULL_ACCESS: yes }).patEmptyScopesFullAccess, true);
    for (const no of ['false', 'False', '0', 'no', 'off'])
      assert.equal(loadConfig({ SERVICE_PAT_EMPTY_SCOPES_FULL_ACCESS: no }).patEmptyScopesFullAccess, false);
  });

  it('SERVICE_EXTRA_SCOPES splits on spaces and commas', () => {
    assert.deepEqual(loadConfig({ SERVICE_EXTRA_SCOPES: 'read:reports, write:reports  billing' }).extraScopes, [
      'read:reports',
      'write:reports',
      'billing',
    ]);
  });

  const invalid: [string, string][] = [
    ['NODE_ENV', 'staging'],
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['PORT', '-1'],
    ['PORT', '80.5'],
    ['BASE_URL', 'not a url'],
    ['BASE_URL', 'ftp://example.com'],
    ['BASE_URL', 'https://example.com/?x=1'],
    ['BASE_URL', 'https://user:pw@example.com'],
    ['DATABASE_URL', 'mysql://root@localhost/svc'],
    ['DATABASE_URL', 'service.sqlite3'],
    ['SECRET_KEY', 'too-short'],
    ['LOG_LEVEL', 'loud'],
    ['SERVICE_BODY_LIMIT_BYTES', '10'],
    ['SERVICE_BODY_LIMIT_BYTES', 'lots'],
    ['SERVICE_API_DOCS_PUBLIC', 'maybe'],
    ['SERVICE_EXTRA_SCOPES', 'Bad Scope!'],
    ['SERVICE_PAT_EMPTY_SCOPES_FULL_ACCESS', '2'],
    ['REDIS_URL', 'http://localhost:6379'],
    ['SERVICE_THROTTLE_ANON', '100'],
    ['SERVICE_THROTTLE_USER', '0/hour'],
    ['SERVICE_THROTTLE_AUTH', '10/fortnight'],
    ['SERVICE_THROTTLE_ANON', '1000000000000000/hour'],
    ['SERVICE_IDEMPOTENCY_TTL_HOURS', '0'],
    ['SERVICE_WEBHOOKS_ENABLED', 'sometimes'],
    ['SERVICE_OAUTH_ACCESS_TTL_SECONDS', '0'],
    ['SERVICE_OAUTH_ACCESS_TTL_SECONDS', 'an hour'],
    ['SERVICE_OAUTH_REFRESH_TTL_SECONDS', '59'],
    ['SERVICE_OAUTH_CLI_CLIENT_ENABLED', 'perhaps'],
    ['SERVICE_AUDIT_RETENTION_DAYS', '29'],
    ['SERVICE_AUDIT_RETENTION_DAYS', 'a year'],
    ['SERVICE_MAIL_EVENTS_RETENTION_DAYS', '0'],
    ['SERVICE_MAIL_EVENTS_RETENTION_DAYS', '90d'],
    ['SERVICE_MCP_ENABLED', 'later'],
  ];
  for (const [name, value] of invalid) {
    it(`${name}=${JSON.stringify(value)} is refused with a message naming ${name}`, () => {
      assert.throws(
        () => loadConfig({ [name]: value }),
        (error: Error) => error instanceof ConfigError && error.message.includes(name),
      );
    });
  }

  it('OAuth token lifetimes and the CLI client: defaults, and a refresh token must outlive its access token', () => {
    assert.deepEqual(loadConfig({}).oauth, {
      accessTokenTtlSeconds: 3600,
      refreshTokenTtlSeconds: 30 * 86400,
      cliClientEnabled: true,
    });
    const short = loadConfig({
      SERVICE_OAUTH_ACCESS_TTL_SECONDS: '2',
      SERVICE_OAUTH_REFRESH_TTL_SECONDS: '600',
      SERVICE_OAUTH_CLI_CLIENT_ENABLED: 'false',
    }).oauth;
    assert.deepEqual(short, { accessTokenTtlSeconds: 2, refreshTokenTtlSeconds: 600, cliClientEnabled: false });
    assert.throws(
      () => loadConfig({ SERVICE_OAUTH_ACCESS_TTL_SECONDS: '7200', SERVICE_OAUTH_REFRESH_TTL_SECONDS: '3600' }),
      (error: Error) =>
        error instanceof ConfigError &&
        /SERVICE_OAUTH_REFRESH_TTL_SECONDS \(3600\) must exceed SERVICE_OAUTH_ACCESS_TTL_SECONDS/.test(error.message),
    );
  });

  it('an invalid DATABASE_URL message does not echo its password', () => {
    assert.throws(
      () => loadConfig({ DATABASE_URL: 'mysql://root:hunter2@db/svc' }),
      (error: Error) => !error.message.includes('hunter2'),
    );
  });
});

describe('README', () => {
  it('documents every environment variable that src/config*.ts reads, in the settings table', () => {
    const files = fs.readdirSync(path.join(ROOT, 'src')).filter((name) => /^config.*\.ts$/.test(name));
    assert.ok(files.length >= 2, `config files: ${files.join(', ')}`);
    const source = files.map((name) => fs.readFileSync(path.join(ROOT, 'src', name), 'utf8')).join('\n');
    const names = [...new Set([...source.matchAll(/['"`]([A-Z][A-Z0-9_]{2,})['"`]/g)].map((m) => m[1]))];
    assert.ok(
      names.includes('DATABASE_URL') && names.includes('SECRET_KEY') && names.length >= 10,
      `found ${names.join(', ')}`,
    );
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const rows = new Set([...readme.matchAll(/^\|\s*`([A-Z][A-Z0-9_]+)`\s*\|/gm)].map((m) => m[1]));
    const missing = names.filter((name) => !rows.has(name));
    assert.deepEqual(missing, [], `settings missing from the README table: ${missing.join(', ')}`);
  });
});
