// The production build is an esbuild bundle (scripts/bundle.mjs), and every other test loads the
// sources instead. This builds a copy, runs it as an operator would (migrate, create a user, serve)
// and checks over HTTP what the bundling choices could break: Node's modules read without ES module
// facades, the schema compilers loaded from node_modules on a route's first request, argon2's
// threads started from the bundle; and what a start loads (Node's internal undici, which an
// ES module import of node:http pulls in, is a large share of a start: docs/architecture.md).
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { NODE, ROOT, exitOf, processEnv, waitForLine } from '../cli/cli-helpers.ts';

// Inside the project (gitignored), so the packages the bundle leaves to node_modules resolve from it
// as they do from dist/.
const OUT = path.join(ROOT, 'test-output', `bundle-${process.pid}`);
const EMAIL = 'bundle@example.com';
const PASSWORD = 'a long bundle password 7';

// Preloaded into the served bundle: when its server listens, prints the port and the internal
// undici modules the start has loaded (it reads node:net the way the bundle does, adding no ES
// module facade of its own).
const PRELOAD = `
const net = process.getBuiltinModule('node:net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  this.once('listening', () => {
    const undici = process.moduleLoadList.filter((name) => name.includes('undici'));
    console.log('bundle-listening ' + this.address().port + ' ' + JSON.stringify(undici));
  });
  return listen.apply(this, args);
};
`;

// Packages Fastify require()s only off the start path, left to node_modules (scripts/bundle.mjs).
const LEFT_OUT =
  /(^|\/)node_modules\/(ajv|@fastify\/ajv-compiler|@fastify\/fast-json-stringify-compiler|light-my-request)\//;

function run(env: Record<string, string>, args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(NODE, args, { cwd: ROOT, env: processEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

describe('the production bundle', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bundle-'));
  const env: Record<string, string> = {
    NODE_ENV: 'production',
    SECRET_KEY: 'bundle-test-secret-key-0123456789abcdefghijklmnop',
    SERVICE_DATA_DIR: dataDir,
    DATABASE_URL: `sqlite:${path.join(dataDir, 'bundle.sqlite3')}`,
    HOST: '127.0.0.1',
    PORT: '0',
  };
  let server: ChildProcess | undefined;
  let base = '';
  let undiciAtListen: string[];

  before(async () => {
    const built = await run({}, ['scripts/bundle.mjs', OUT]);
    assert.equal(built.code, 0, built.output);
    fs.writeFileSync(path.join(OUT, 'test-preload.mjs'), PRELOAD);
    const migrated = await run(env, [path.join(OUT, 'main.js'), 'migrate']);
    assert.equal(migrated.code, 0, migrated.output);
    const created = await run(env, [
      path.join(OUT, 'main.js'),
      'user',
      'create',
      '--email',
      EMAIL,
      '--password',
      PASSWORD,
      '--verified',
    ]);
    assert.equal(created.code, 0, created.output);
    server = spawn(
      NODE,
      ['--import', path.join(OUT, 'test-preload.mjs'), path.join(OUT, 'main.js'), 'serve', '--no-worker'],
      {
        cwd: ROOT,
        env: processEnv(env),
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const [, port, undici] = await waitForLine(server, /^bundle-listening (\d+) (.*)$/, 60_000);
    base = `http://127.0.0.1:${port}`;
    undiciAtListen = JSON.parse(undici);
  });

  after(async () => {
    if (server) {
      server.kill('SIGTERM');
      await exitOf(server);
    }
    fs.rmSync(OUT, { recursive: true, force: true });
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('starts without loading Node’s internal undici', () => {
    assert.deepEqual(undiciAtListen, []);
  });

  it('leaves the schema compilers and light-my-request out of the bundle', () => {
    const maps = fs.readdirSync(OUT).filter((file) => file.endsWith('.js.map'));
    assert.ok(maps.length > 1);
    const sources = maps.flatMap(
      (file) => (JSON.parse(fs.readFileSync(path.join(OUT, file), 'utf8')) as { sources: string[] }).sources,
    );
    assert.ok(
      sources.some((source) => source.includes('node_modules/fastify/')),
      'the source maps name the bundled packages',
    );
    assert.deepEqual(
      sources.filter((source) => LEFT_OUT.test(source)),
      [],
    );
  });

  it('answers a refusal as problem details, titled from node:http’s status texts', async () => {
    const response = await fetch(`${base}/api/v1/me/`);
    assert.equal(response.status, 401);
    assert.match(response.headers.get('content-type') ?? '', /^application\/problem\+json/);
    assert.ok(response.headers.get('x-request-id'));
    const body = (await response.json()) as { title: string; status: number };
    assert.equal(body.title, 'Unauthorized');
    assert.equal(body.status, 401);
  });

  it('validates a body with the schema compiler it loads on first use', async () => {
    const response = await fetch(`${base}/api/auth/token/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: EMAIL }),
    });
    assert.equal(response.status, 400);
    const body = (await response.json()) as { errors: { field: string }[] };
    assert.deepEqual(
      body.errors.map((e) => e.field),
      ['password'],
    );
  });

  it('issues a JWT (argon2 on its threads) and serves the profile with it', async () => {
    const issued = await fetch(`${base}/api/auth/token/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: EMAIL, password: PASSWORD }),
    });
    assert.equal(issued.status, 200);
    const { access, token_type } = (await issued.json()) as { access: string; token_type: string };
    assert.equal(token_type, 'Bearer');
    const me = await fetch(`${base}/api/v1/me/`, { headers: { authorization: `Bearer ${access}` } });
    assert.equal(me.status, 200);
    assert.equal(((await me.json()) as { email: string }).email, EMAIL);
  });
});
