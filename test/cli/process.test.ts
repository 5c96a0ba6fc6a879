// `svc` as an operator runs it: real Node 24 subprocesses on the test database. A token made by
// `svc token create` works over real HTTP against a running `svc serve`, whose log lines carry the
// request id; SIGTERM stops it cleanly.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { PAT_CACHE_TTL_MS } from '../../src/tokens/pat-resolver.ts';
import { startApp, type TestApp } from '../support/app.ts';
import { NODE, ROOT, exitOf, snapshot, spawnSvc, svc, waitForLine } from './cli-helpers.ts';
import { spawn } from 'node:child_process';

describe('svc as a subprocess', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp();
  });
  after(() => t.close());

  let email: string;
  let token: string;

  it('user create prints the id; an existing e-mail exits 1; a bad argument exits 2 with nothing written', async () => {
    email = `operator-${process.pid}@example.com`;
    const created = await svc(t.env, [
      'user',
      'create',
      '--email',
      email,
      '--password',
      'a long password',
      '--first-name',
      'Op',
      '--verified',
    ]);
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stdout, /^\d+\n$/);
    const row = await t.ctx.db.kysely
      .selectFrom('users')
      .select(['id', 'first_name'])
      .where('email', '=', email)
      .executeTakeFirstOrThrow();
    assert.deepEqual([row.id, row.first_name], [Number(created.stdout), 'Op']);

    const before = await snapshot(t);
    const again = await svc(t.env, ['user', 'create', '--email', email, '--password', 'a long password']);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /already exists/);
    assert.equal(again.stdout, '');
    const bad = await svc(t.env, ['user', 'create', '--email', 'not-an-address', '--password', 'a long password']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /not a valid e-mail address/);
    assert.equal(bad.stdout, '');
    assert.equal(await snapshot(t), before);
  });

  it('team create prints the UUID, add-member adds', async () => {
    const team = await svc(t.env, ['team', 'create', '--name', 'Ops', '--owner', email]);
    assert.equal(team.code, 0, team.stderr);
    assert.match(team.stdout, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\n$/);
    const other = await t.user();
    const added = await svc(t.env, ['team', 'add-member', '--team', 'ops', '--email', other.email, '--role', 'member']);
    assert.equal(added.code, 0, added.stderr);
    const bad = await svc(t.env, ['team', 'add-member', '--team', 'ops', '--email', other.email, '--role', 'boss']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--role/);
  });

  it('token create prints the raw token alone on one line; --expires-at in the past exits 2', async () => {
    const result = await svc(t.env, [
      'token',
      'create',
      '--email',
      email,
      '--name',
      'laptop',
      '--scopes',
      'read:profile read:teams',
    ]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^svc_[0-9A-Za-z]{36}\n$/);
    assert.equal(result.stderr, '');
    token = result.stdout.trim();
    const past = await svc(t.env, ['token', 'create', '--email', email, '--name', 'old', '--expires-at', '2001-01-01']);
    assert.equal(past.code, 2);
    assert.match(past.stderr, /in the past/);
    assert.equal(past.stdout, '');
  });

  it('token list --json prints a JSON array, id first', async () => {
    const result = await svc(t.env, ['token', 'list', '--email', email, '--json']);
    assert.equal(result.code, 0, result.stderr);
    const rows = JSON.parse(result.stdout);
    assert.equal(rows.length, 1);
    assert.equal(Object.keys(rows[0])[0], 'id');
    assert.equal(rows[0].name, 'laptop');
    assert.equal(rows[0].prefix, token.slice(0, 12));
  });

  it('the token works over real HTTP against `svc serve`; log lines carry the request id and the method sent; SIGTERM exits 0', async () => {
    const server = spawnSvc({ ...t.env, PORT: '0', LOG_LEVEL: 'info' }, ['serve']);
    let stdout = '';
    server.stdout!.on('data', (chunk) => (stdout += chunk));
    try {
      const [, url] = await waitForLine(server, /^svc listening on (http:\/\/127\.0\.0\.1:\d+) /);
      const me = await fetch(`${url}/api/v1/me/`, {
        headers: { authorization: `Bearer ${token}`, 'x-request-id': 'trace-me-42' },
      });
      assert.equal(me.status, 200);
      assert.equal(me.headers.get('x-request-id'), 'trace-me-42');
      const body = await me.json();
      assert.equal(body.email, email);
      assert.equal(body.first_name, 'Op');
      const head = await fetch(`${url}/api/v1/me/`, {
        method: 'HEAD',
        headers: { authorization: `Bearer ${token}`, 'x-request-id': 'trace-head-43' },
      });
      assert.equal(head.status, 200);
      const teams = await fetch(`${url}/api/v1/teams/`, { headers: { authorization: `Bearer ${token}` } });
      assert.deepEqual(
        (await teams.json()).results.map((r: { slug: string; role: string }) => [r.slug, r.role]),
        [['ops', 'owner']],
      );
      const refused = await fetch(`${url}/api/v1/me/`, { headers: { authorization: `Bearer ${token}x` } });
      assert.equal(refused.status, 401);
      assert.match(String(refused.headers.get('www-authenticate')), /^Bearer /);
      // Another process (this test's own connection) deactivating the user, or revoking the
      // token: on SQLite the running server's very next request sees it (the README's promise for
      // `svc user deactivate` and `svc token revoke`: "stop working on the next request"). On
      // PostgreSQL the change reaches the server as a notification, which a request sent the
      // moment the write returns can overtake; it must show within the PAT cache's 1 s bound
      // (docs/performance.md, "The PAT cache and its exact guarantee").
      const auth = { headers: { authorization: `Bearer ${token}` } };
      const postgres = t.ctx.db.dialect === 'postgres';
      const answers = async (expected: number, what: string) => {
        const deadline = Date.now() + (postgres ? PAT_CACHE_TTL_MS : 0);
        let status = (await fetch(`${url}/api/v1/me/`, auth)).status;
        while (status !== expected && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 10));
          status = (await fetch(`${url}/api/v1/me/`, auth)).status;
        }
        assert.equal(status, expected, what);
      };
      assert.equal((await fetch(`${url}/api/v1/me/`, auth)).status, 200);
      await t.ctx.db.kysely.updateTable('users').set({ is_active: 0 }).where('email', '=', email).execute();
      await answers(401, 'deactivation seen on the next request (PostgreSQL: within 1 s)');
      await t.ctx.db.kysely.updateTable('users').set({ is_active: 1 }).where('email', '=', email).execute();
      await answers(200, 'reactivation');
      await t.ctx.db.kysely
        .updateTable('personal_access_tokens')
        .set({ revoked_at: new Date().toISOString() })
        .where('token_prefix', '=', token.slice(0, 12))
        .execute();
      await answers(401, 'revocation seen on the next request (PostgreSQL: within 1 s)');
      await t.ctx.db.kysely
        .updateTable('personal_access_tokens')
        .set({ revoked_at: null })
        .where('token_prefix', '=', token.slice(0, 12))
        .execute();
      await answers(200, 'revocation undone');
      // `svc token revoke` (a third process) likewise.
      const [{ id }] = JSON.parse((await svc(t.env, ['token', 'list', '--email', email, '--json'])).stdout);
      assert.equal((await svc(t.env, ['token', 'revoke', '--id', String(id)])).code, 0);
      await answers(401, 'svc token revoke seen on the next request (PostgreSQL: within 1 s)');
    } finally {
      server.kill('SIGTERM');
    }
    const exit = await exitOf(server);
    assert.deepEqual(exit, { code: 0, signal: null });
    const lines = stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line));
    const traced = lines.filter((line) => line.request_id === 'trace-me-42');
    assert.equal(traced.length, 1, 'one log line for the request, carrying its id');
    assert.equal(traced[0].url, '/api/v1/me/');
    assert.equal(traced[0].status, 200);
    assert.equal(traced[0].method, 'GET');
    // A HEAD request is routed as a GET (src/http/head-requests.ts) and logged as what it was.
    const head = lines.filter((line) => line.request_id === 'trace-head-43');
    assert.deepEqual(
      head.map((line) => [line.method, line.url, line.status]),
      [['HEAD', '/api/v1/me/', 200]],
    );
    assert.ok(!stdout.includes(token), 'the token never appears in the logs');
  });

  it('`svc serve` on a port already in use exits 1 with the reason', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      const result = await svc({ ...t.env, PORT: String(port) }, ['serve', '--no-worker'], 30_000);
      assert.equal(result.code, 1);
      assert.match(result.stderr, /EADDRINUSE/);
    } finally {
      blocker.close();
    }
  });

  it('`svc worker` runs until SIGTERM, then exits 0', async () => {
    const worker = spawnSvc(t.env, ['worker']);
    await waitForLine(worker, /^svc worker running/);
    worker.kill('SIGTERM');
    assert.deepEqual(await exitOf(worker), { code: 0, signal: null });
  });

  it('`svc migrate` on a fresh data directory creates the database', async () => {
    const fs = await import('node:fs');
    const os = await import('node:os');
    const path = await import('node:path');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-migrate-'));
    try {
      const env = { NODE_ENV: 'test', SERVICE_DATA_DIR: path.join(dir, 'data'), LOG_LEVEL: 'silent' };
      const result = await svc(env, ['migrate']);
      assert.deepEqual([result.code, result.stdout, result.stderr], [0, 'migrations are up to date\n', '']);
      assert.ok(fs.existsSync(path.join(dir, 'data', 'service.sqlite3')));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the `svc` bin (bin/svc.mjs) runs the CLI', async () => {
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(NODE, ['bin/svc.mjs'], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...t.env } });
      let stderr = '';
      child.stderr.on('data', (chunk) => (stderr += chunk));
      child.on('close', (code) => resolve({ code, stderr }));
    });
    assert.equal(result.code, 2);
    assert.match(result.stderr, /Usage:[\s\S]*svc token create/);
  });
});
