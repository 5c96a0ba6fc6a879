// Runs the TypeScript compiler on types.check.ts: it must compile as it is (every `@ts-expect-error`
// is needed), and with the directives removed it must fail with exactly one error on each line that
// followed one: a wrong path, a missing required field, a wrong field type, … do not compile.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '../../..');
const TSC = path.join(ROOT, 'node_modules/typescript/bin/tsc');
const WORK = path.join(ROOT, 'test-output', `client-types-${process.pid}`);

/** tsc on one file with the repository's compiler options; the `file(line,col): error TSnnnn` lines. */
async function compile(file: string): Promise<string[]> {
  fs.mkdirSync(WORK, { recursive: true });
  const project = path.join(WORK, `${path.basename(file)}.tsconfig.json`);
  fs.writeFileSync(project, JSON.stringify({ extends: path.join(ROOT, 'tsconfig.json'), files: [file], include: [] }));
  try {
    await promisify(execFile)(process.execPath, [TSC, '-p', project, '--pretty', 'false'], { cwd: ROOT });
    return [];
  } catch (error) {
    const output = String((error as { stdout?: string }).stdout ?? '');
    const errors = output.split('\n').filter((line) => /error TS\d+/.test(line));
    if (errors.length === 0) throw error;
    return errors;
  }
}

// Packaging and types do not depend on the database: run once, on the SQLite pass of the suite.
describe('svc-client types', { skip: process.env.TEST_DATABASE_URL ? 'runs on the SQLite pass only' : false }, () => {
  after(() => fs.rmSync(WORK, { recursive: true, force: true }));

  it('the type test compiles, and each @ts-expect-error line is an error without its directive', async () => {
    const source = fs.readFileSync(path.join(HERE, 'types.check.ts'), 'utf8');
    const lines = source.split('\n');
    const expectedAt = lines.flatMap((line, i) => (/^\s*\/\/ @ts-expect-error/.test(line) ? [i + 2] : []));
    assert.ok(expectedAt.length >= 3, 'a wrong path, a missing required field and a wrong field type at least');

    const [asIs, stripped] = await Promise.all([
      compile(path.join(HERE, 'types.check.ts')),
      (async () => {
        // The same lines, each directive replaced by an empty comment (line numbers kept), the import
        // pointed at the sources from where the copy is.
        const file = path.join(WORK, 'types.stripped.ts');
        fs.mkdirSync(WORK, { recursive: true });
        const text = lines
          .map((line) => line.replace(/\/\/ @ts-expect-error.*/, '//'))
          .join('\n')
          .replace("'../src/index.ts'", JSON.stringify(path.relative(WORK, path.join(HERE, '../src/index.ts'))));
        fs.writeFileSync(file, text);
        return compile(file);
      })(),
    ]);
    assert.deepEqual(asIs, [], asIs.join('\n'));
    const linesWithErrors = stripped.map((line) => Number(/\((\d+),\d+\): error/.exec(line)?.[1]));
    assert.deepEqual(linesWithErrors, expectedAt, stripped.join('\n'));
  });
});
