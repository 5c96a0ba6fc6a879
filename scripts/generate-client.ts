// `npm run generate:client`: regenerates the typed client's types (clients/client/src/schema.ts) from
// the OpenAPI document of the running service, with openapi-typescript. Without --url it starts the
// service from this checkout as a real process (`svc serve --no-worker` on a throw-away SQLite
// database, default settings) and stops it afterwards, so the types describe exactly what the code
// serves. `--check` writes nothing and exits 1 when the committed file differs (CI's drift check).
//
//   npm run generate:client                 # rewrite the file
//   npm run generate:client -- --check      # fail when it is out of date
//   npm run generate:client -- --url http://localhost:8000   # from a service already running
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const TARGET = path.join(ROOT, 'clients/client/src/schema.ts');
const HEADER = [
  "// The service's API as TypeScript types, generated from its OpenAPI document (/api/schema/) by",
  '// openapi-typescript through `npm run generate:client`. Do not edit: CI regenerates it from the',
  '// running service and fails when it differs from this file (.ci/run).',
  '',
].join('\n');

const { values } = parseArgs({ options: { check: { type: 'boolean', default: false }, url: { type: 'string' } } });

async function fetchDocument(baseUrl: string): Promise<OpenAPI3> {
  const res = await fetch(new URL('/api/schema/', baseUrl));
  if (!res.ok) throw new Error(`GET ${baseUrl}/api/schema/ answered ${res.status} (is SERVICE_API_DOCS_PUBLIC on?)`);
  return (await res.json()) as OpenAPI3;
}

/** Starts `svc serve` on a free port and a fresh data directory; resolves with its URL and a stop(). */
async function startService(): Promise<{ url: string; stop: () => Promise<void> }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-generate-'));
  // Only what the service needs: none of the caller's settings (extra scopes, a database) may change the document.
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? dataDir,
    NODE_ENV: 'test',
    PORT: '0',
    HOST: '127.0.0.1',
    SERVICE_DATA_DIR: dataDir,
    SERVICE_API_DOCS_PUBLIC: 'true',
  };
  const child = spawn(
    process.execPath,
    ['--disable-warning=ExperimentalWarning', 'src/main.ts', 'serve', '--no-worker'],
    { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    child.kill('SIGTERM');
    await exited;
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the service did not start within 60 s:\n${output}`)), 60_000);
    child.stderr.on('data', (chunk) => (output += chunk));
    child.stdout.on('data', (chunk) => {
      output += chunk;
      const match = /svc listening on (http:\/\/[^\s]+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the service exited (${code}) before listening:\n${output}`));
    });
  }).catch(async (error) => {
    await stop();
    throw error;
  });
  return { url, stop };
}

async function generate(document: OpenAPI3): Promise<string> {
  return HEADER + astToString(await openapiTS(document, { silent: true }));
}

const service = values.url ? { url: values.url, stop: async () => {} } : await startService();
let generated: string;
try {
  generated = await generate(await fetchDocument(service.url));
} finally {
  await service.stop();
}

const relative = path.relative(ROOT, TARGET);
if (values.check) {
  const committed = fs.existsSync(TARGET) ? fs.readFileSync(TARGET, 'utf8') : '';
  if (committed !== generated) {
    const a = committed.split('\n');
    const b = generated.split('\n');
    let line = 0;
    while (line < a.length && a[line] === b[line]) line++;
    console.error(`${relative} differs from the service's OpenAPI document (first at line ${line + 1}):`);
    console.error(`  committed: ${a[line] ?? '(end of file)'}\n  generated: ${b[line] ?? '(end of file)'}`);
    console.error('Run `npm run generate:client` and commit the result.');
    process.exit(1);
  }
  console.log(`${relative} matches the service's OpenAPI document`);
} else {
  fs.writeFileSync(TARGET, generated);
  console.log(`wrote ${relative}`);
}
