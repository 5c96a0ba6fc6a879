// `npm pack` makes an installable svc-client: its prepack compiles dist/ (JavaScript and declarations);
// the tarball holds dist, the README and package.json. Unpacked as node_modules/svc-client of a
// consumer, it runs against the real service, and its declarations type-check a consumer's calls
// (a wrong one still fails).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startApp, type TestApp } from '../../../test/support/app.ts';

const run = promisify(execFile);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
// Inside the repository, so the consumer finds openapi-fetch in the root node_modules as an installation would.
const WORK = path.join(ROOT, 'test-output', `client-pack-${process.pid}`);

// Packaging and types do not depend on the database: run once, on the SQLite pass of the suite.
describe(
  'npm pack -w clients/client',
  { skip: process.env.TEST_DATABASE_URL ? 'runs on the SQLite pass only' : false },
  () => {
    let t: TestApp;
    let base: string;
    before(async () => {
      t = await startApp();
      base = await t.listen();
    });
    after(async () => {
      await t?.close();
      fs.rmSync(WORK, { recursive: true, force: true });
    });

    it("packs dist/, which works and type-checks from a consumer's node_modules", async () => {
      fs.mkdirSync(WORK, { recursive: true });
      const { stdout } = await run('npm', ['pack', '-w', 'clients/client', '--pack-destination', WORK, '--json'], {
        cwd: ROOT,
      });
      const [packed] = JSON.parse(stdout.slice(stdout.indexOf('[')));
      const files: string[] = packed.files.map((f: { path: string }) => f.path);
      assert.ok(
        files.includes('dist/index.js') && files.includes('dist/index.d.ts') && files.includes('dist/schema.d.ts'),
        files.join(' '),
      );
      assert.ok(files.includes('README.md') && files.includes('package.json'));
      assert.ok(!files.some((f) => f.startsWith('src/') || f.startsWith('test/')), 'no sources or tests');

      const installed = path.join(WORK, 'node_modules/svc-client');
      fs.mkdirSync(installed, { recursive: true });
      await run('tar', ['-xzf', path.join(WORK, packed.filename), '-C', installed, '--strip-components=1']);

      const owner = await t.user();
      const token = await t.token(owner.id, []);
      const script = `import { createClient } from 'svc-client';\nconst me = await createClient({ baseUrl: ${JSON.stringify(base)}, token: ${JSON.stringify(token)} }).GET('/api/v1/me/');\nconsole.log(me.email);\n`;
      fs.writeFileSync(path.join(WORK, 'consumer.mjs'), script);
      const answer = await run(process.execPath, ['consumer.mjs'], { cwd: WORK });
      assert.equal(answer.stdout, `${owner.email}\n`);

      fs.writeFileSync(
        path.join(WORK, 'consumer.ts'),
        [
          "import { createClient, type Team } from 'svc-client';",
          "const client = createClient({ baseUrl: 'http://localhost:8000' });",
          "export const team: Promise<Team> = client.POST('/api/v1/teams/', { body: { name: 'Acme' } });",
          '// @ts-expect-error a wrong field type',
          "client.POST('/api/v1/teams/', { body: { name: 1 } });",
          '',
        ].join('\n'),
      );
      fs.writeFileSync(
        path.join(WORK, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            module: 'nodenext',
            moduleResolution: 'nodenext',
            target: 'es2023',
            strict: true,
            noEmit: true,
            skipLibCheck: true,
            types: [],
          },
          files: ['consumer.ts'],
        }),
      );
      const tsc = await run(
        process.execPath,
        [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', WORK, '--pretty', 'false'],
        { cwd: WORK },
      ).catch((error) => error);
      // skipLibCheck skips checking the declarations themselves, not using them: a type lost on the way
      // (an import that does not resolve) would make Team `any` and the expect-error unused, an error.
      assert.equal(tsc.stdout ?? '', '', 'the consumer type-checks against the packed declarations');
    });
  },
);
