// A process started with bad settings stops before it does anything: production refuses to start
// without SECRET_KEY, and a bad value stops `svc serve` with a message naming the variable. A file of
// its own because it starts processes: `npm run test:fast` leaves it out (loadConfig's own checks are
// in config.test.ts).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { svc } from './cli/cli-helpers.ts';

describe('the process refuses bad settings', () => {
  it('NODE_ENV=production without SECRET_KEY: `svc serve` exits non-zero naming SECRET_KEY and creates nothing', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-prod-'));
    const dataDir = path.join(dir, 'data');
    try {
      const result = await svc({ NODE_ENV: 'production', SERVICE_DATA_DIR: dataDir, PORT: '0' }, ['serve'], 30_000);
      assert.notEqual(result.code, 0);
      assert.match(result.stderr, /SECRET_KEY/);
      assert.doesNotMatch(result.stdout, /listening/);
      assert.equal(fs.existsSync(dataDir), false);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a bad value stops `svc serve` with exit 1 and the variable's name", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-badcfg-'));
    try {
      const result = await svc(
        { NODE_ENV: 'test', SERVICE_DATA_DIR: dir, PORT: '0', SERVICE_PAT_EMPTY_SCOPES_FULL_ACCESS: 'perhaps' },
        ['serve'],
        30_000,
      );
      assert.equal(result.code, 1);
      assert.match(result.stderr, /^svc: configuration error: SERVICE_PAT_EMPTY_SCOPES_FULL_ACCESS/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
