// `npm pack` makes an installable svc-cli: its prepack bundles dist/svc-cli.mjs; the tarball holds the
// bin, the bundle, the README and package.json (no sources, no tests); and the unpacked command runs
// with nothing installed beside it, against the real service.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { startApp, type TestApp } from '../../../test/support/app.ts';
import { CLI_ROOT } from './helpers.ts';

const run = promisify(execFile);
const ROOT = path.resolve(CLI_ROOT, '../..');

// Packaging and types do not depend on the database: run once, on the SQLite pass of the suite.
describe(
  'npm pack -w clients/cli',
  { skip: process.env.TEST_DATABASE_URL ? 'runs on the SQLite pass only' : false },
  () => {
    let work: string;
    let t: TestApp;
    let base: string;
    before(async () => {
      work = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-cli-pack-'));
      t = await startApp();
      base = await t.listen();
    });
    after(async () => {
      await t?.close();
      if (work) fs.rmSync(work, { recursive: true, force: true });
    });

    it('packs the bin and the bundle, which run on their own', async () => {
      const { stdout } = await run('npm', ['pack', '-w', 'clients/cli', '--pack-destination', work, '--json'], {
        cwd: ROOT,
      });
      const [packed] = JSON.parse(stdout.slice(stdout.indexOf('[')));
      assert.deepEqual(packed.files.map((f: { path: string }) => f.path).sort(), [
        'README.md',
        'bin/svc-cli.mjs',
        'dist/svc-cli.mjs',
        'package.json',
      ]);
      await run('tar', ['-xzf', path.join(work, packed.filename), '-C', work]);
      const bin = path.join(work, 'package/bin/svc-cli.mjs');
      const manifest = JSON.parse(fs.readFileSync(path.join(work, 'package/package.json'), 'utf8'));
      assert.equal(manifest.bin['svc-cli'], 'bin/svc-cli.mjs');
      assert.ok(manifest.engines.node);
      assert.equal(manifest.dependencies, undefined, 'everything it needs is in the bundle');

      const version = await run(process.execPath, [bin, '--version'], { cwd: work });
      assert.equal(version.stdout, `svc-cli ${manifest.version}\n`);
      const owner = await t.user();
      const token = await t.token(owner.id, []);
      const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: work, SVC_URL: base, SVC_TOKEN: token };
      const who = await run(process.execPath, [bin, 'whoami', '--json'], { cwd: work, env });
      assert.equal(JSON.parse(who.stdout).email, owner.email);
    });
  },
);
