// `npm start` from a fresh clone: it creates the data directory, a development SECRET_KEY file
// (mode 0600, kept across restarts) and the SQLite database, listens, answers /healthz, and stops
// cleanly on SIGTERM (the server itself, not only npm).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { ROOT, exitOf, waitForLine } from './cli-helpers.ts';

async function start(dataDir: string) {
  const child = spawn('npm', ['start'], {
    cwd: ROOT,
    // Nothing of the test run's settings: the defaults of a fresh clone, on a free port.
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/tmp',
      SERVICE_DATA_DIR: dataDir,
      PORT: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const [, url] = await waitForLine(child, /^svc listening on (http:\/\/127\.0\.0\.1:\d+) .*database sqlite/, 90_000);
  return { child, url };
}

async function refusesConnections(url: string): Promise<boolean> {
  try {
    await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) });
    return false;
  } catch {
    return true;
  }
}

describe('npm start from a fresh data directory', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-start-'));
  const dataDir = path.join(root, 'not', 'yet', 'data');
  after(() => fs.rmSync(root, { recursive: true, force: true }));

  it('creates the data dir, secret key and database, serves, and exits 0 on SIGTERM; a restart keeps the key', async () => {
    assert.equal(fs.existsSync(dataDir), false);
    const { child, url } = await start(dataDir);
    let key: string;
    try {
      assert.ok(fs.statSync(dataDir).isDirectory());
      const keyFile = path.join(dataDir, 'secret_key');
      assert.equal(fs.statSync(keyFile).mode & 0o777, 0o600);
      key = fs.readFileSync(keyFile, 'utf8').trim();
      assert.ok(key.length >= 32, 'a generated key of at least 32 characters');
      assert.ok(fs.statSync(path.join(dataDir, 'service.sqlite3')).size > 0);

      const health = await fetch(`${url}/healthz`);
      assert.equal(health.status, 200);
      assert.deepEqual(await health.json(), { status: 'ok' });
      assert.equal((await fetch(`${url}/readyz`)).status, 200);
      const me = await fetch(`${url}/api/v1/me/`);
      assert.equal(me.status, 401);
      assert.ok(me.headers.get('x-request-id'));
    } finally {
      child.kill('SIGTERM');
    }
    assert.deepEqual(await exitOf(child), { code: 0, signal: null });
    assert.ok(await refusesConnections(url), 'the server process is gone, not orphaned behind npm');

    const again = await start(dataDir);
    try {
      assert.equal(
        fs.readFileSync(path.join(dataDir, 'secret_key'), 'utf8').trim(),
        key,
        'the development key is kept',
      );
      assert.equal((await fetch(`${again.url}/healthz`)).status, 200);
    } finally {
      again.child.kill('SIGTERM');
    }
    assert.deepEqual(await exitOf(again.child), { code: 0, signal: null });
  });
});
