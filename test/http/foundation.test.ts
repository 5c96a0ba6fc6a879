import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { bearer, startApp, type TestApp } from '../support/app.ts';

describe('HTTP foundation', () => {
  let t: TestApp;
  let token: string;
  before(async () => {
    t = await startApp();
    const user = await t.user({ firstName: 'Ada' });
    token = await t.token(user.id, ['read:profile']);
  });
  after(() => t.close());

  it('GET /api/v1/me/ returns the profile', async () => {
    const res = await t.inject({ url: '/api/v1/me/', headers: bearer(token) });
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.deepEqual(Object.keys(body), ['id', 'email', 'first_name', 'last_name', 'display_name']);
    assert.equal(body.first_name, 'Ada');
    assert.equal(typeof body.id, 'number');
  });

  it('a path without its trailing slash is a 404 problem, not a redirect', async () => {
    const res = await t.inject({ url: '/api/v1/me', headers: bearer(token) });
    assert.equal(res.statusCode, 404);
    assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
    const body = res.json();
    assert.equal(body.status, 404);
    assert.equal(body.detail, 'Not found.');
    assert.equal(body.request_id, res.headers['x-request-id']);
    assert.equal(res.headers.location, undefined);
  });

  it('a wrong method is 405 with Allow', async () => {
    const res = await t.inject({ method: 'DELETE', url: '/api/v1/me/', headers: bearer(token) });
    assert.equal(res.statusCode, 405);
    assert.equal(res.headers.allow, 'GET, HEAD, PATCH');
    assert.equal(res.json().status, 405);
  });

  describe('X-Request-ID', () => {
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
    it('echoes a valid client value', async () => {
      const res = await t.inject({ url: '/api/v1/me/', headers: { ...bearer(token), 'x-request-id': 'abc_DEF-123' } });
      assert.equal(res.headers['x-request-id'], 'abc_DEF-123');
    });
    it('echoes a value of exactly 128 characters', async () => {
      const id = 'a'.repeat(128);
      const res = await t.inject({ url: '/api/v1/me/', headers: { 'x-request-id': id } });
      assert.equal(res.headers['x-request-id'], id);
    });
    for (const [label, value] of [
      ['empty', ''],
      ['129 characters', 'a'.repeat(129)],
      ['a space', 'abc def'],
      ['a dot', 'abc.def'],
      ['unicode', 'é'],
    ]) {
      it(`replaces ${label} with a UUID`, async () => {
        const res = await t.inject({ url: '/api/v1/nope/', headers: { 'x-request-id': value } });
        assert.match(String(res.headers['x-request-id']), uuid);
        assert.equal(res.json().request_id, res.headers['x-request-id']);
      });
    }
    it('is on non-API responses too (health, 404, 405)', async () => {
      for (const [method, url] of [
        ['GET', '/healthz'],
        ['GET', '/nowhere'],
        ['POST', '/api/v1/me/'],
      ] as const) {
        const res = await t.inject({ method, url, headers: { 'x-request-id': 'everywhere-1' } });
        assert.equal(res.headers['x-request-id'], 'everywhere-1', `${method} ${url}`);
      }
    });
    it('a repeated header (two values) is replaced by a UUID', async () => {
      const base = new URL(await t.listen());
      // Raw bytes: fetch and http.request merge or refuse duplicate headers themselves.
      const response = await new Promise<string>((resolve, reject) => {
        const socket = net.connect(Number(base.port), base.hostname, () => {
          // write, not end: Node's server drops a half-closed connection before answering.
          socket.write(
            'GET /api/v1/me/ HTTP/1.1\r\nHost: x\r\nX-Request-ID: one\r\nX-Request-ID: two\r\nConnection: close\r\n\r\n',
          );
        });
        let data = '';
        socket.on('data', (chunk) => (data += chunk));
        socket.on('end', () => resolve(data));
        socket.on('error', reject);
      });
      assert.match(response, /^HTTP\/1\.1 401 /);
      const id = /\r\nx-request-id: ([^\r]*)\r\n/i.exec(response)?.[1] ?? '';
      assert.match(id, uuid);
    });
    it('generates one when absent, on errors too', async () => {
      const res = await t.inject({ url: '/api/v1/me/' });
      assert.equal(res.statusCode, 401);
      assert.match(String(res.headers['x-request-id']), uuid);
    });
  });

  it('health and readiness', async () => {
    const health = await t.inject({ url: '/healthz' });
    assert.equal(health.statusCode, 200);
    assert.deepEqual(health.json(), { status: 'ok' });
    const ready = await t.inject({ url: '/readyz' });
    assert.equal(ready.statusCode, 200);
  });

  it('serves the OpenAPI document with operation metadata', async () => {
    const res = await t.inject({ url: '/api/schema/' });
    assert.equal(res.statusCode, 200);
    const doc = res.json();
    assert.equal(doc.openapi, '3.0.3');
    const me = doc.paths['/api/v1/me/'].get;
    assert.equal(me.operationId, 'get_me');
    assert.deepEqual(me.security, [{ oauth2: ['read:profile'] }, { bearerAuth: [] }]);
    assert.ok(me.tags.length > 0 && me.summary);
    const problems: string[] = [];
    const operationIds = new Set<string>();
    type Operation = {
      operationId?: string;
      summary?: string;
      tags?: string[];
      responses?: object;
      security?: { oauth2?: string[] }[];
    };
    for (const [path, operations] of Object.entries<Record<string, Operation>>(doc.paths)) {
      for (const [method, op] of Object.entries(operations)) {
        const where = `${method.toUpperCase()} ${path}`;
        if (!op.operationId) problems.push(`${where}: no operationId`);
        else if (operationIds.has(op.operationId)) problems.push(`${where}: duplicate operationId ${op.operationId}`);
        else operationIds.add(op.operationId);
        if (!op.summary) problems.push(`${where}: no summary`);
        if (!op.tags?.length) problems.push(`${where}: no tags`);
        if (!op.responses || Object.keys(op.responses).length === 0) problems.push(`${where}: no responses`);
        // Every authenticated API operation states the scopes it accepts; an open one says so with `security: []`.
        if (path.startsWith('/api/v1/') && op.security?.length !== 0 && !op.security?.[0]?.oauth2?.length)
          problems.push(`${where}: no scopes`);
      }
    }
    assert.deepEqual(problems, [], problems.join('\n'));
    // The oauth2 scheme lists every scope of the registry with its description (test/http/openapi-auth.test.ts).
    const scopes = doc.components.securitySchemes.oauth2.flows.authorizationCode.scopes;
    for (const scope of [
      'read:profile',
      'write:profile',
      'read:teams',
      'write:teams',
      'read:products',
      'admin',
      'read:webhooks',
      'write:webhooks',
      'webhooks:manage',
    ]) {
      assert.ok(scopes[scope], scope);
    }
    const docs = await t.inject({ url: '/api/docs/' });
    assert.equal(docs.statusCode, 200);
  });
});

describe('API docs switched off', () => {
  it('404s /api/schema/ and /api/docs/', async () => {
    const t = await startApp({ SERVICE_API_DOCS_PUBLIC: 'false' });
    try {
      assert.equal((await t.inject({ url: '/api/schema/' })).statusCode, 404);
      assert.equal((await t.inject({ url: '/api/docs/' })).statusCode, 404);
    } finally {
      await t.close();
    }
  });
});

// There is no POST route in the foundation yet: a test-only one shows how request bodies fail.
describe('request bodies and malformed requests', () => {
  let t: TestApp;
  let base: string;
  const LIMIT = 2048;
  before(async () => {
    t = await startApp(
      { SERVICE_BODY_LIMIT_BYTES: String(LIMIT) },
      {
        beforeReady(app) {
          app.post(
            '/api/v1/test-echo/',
            {
              schema: {
                body: {
                  type: 'object',
                  properties: { name: { type: 'string', minLength: 1 }, count: { type: 'integer' } },
                  required: ['name'],
                  additionalProperties: false,
                },
              },
            },
            async (request) => ({ echoed: request.body }),
          );
          app.get('/api/v1/test-boom/', async () => {
            throw new Error('secret internal detail');
          });
        },
      },
    );
    base = await t.listen();
  });
  after(() => t.close());

  const post = (body: string, contentType = 'application/json', headers: Record<string, string> = {}) =>
    t.inject({
      method: 'POST',
      url: '/api/v1/test-echo/',
      payload: body,
      headers: { 'content-type': contentType, ...headers },
    });

  function assertProblem(
    res: { statusCode: number; headers: Record<string, unknown>; json(): any },
    status: number,
    detail: string,
  ) {
    assert.equal(res.statusCode, status);
    assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
    const body = res.json();
    assert.equal(body.status, status);
    assert.equal(body.detail, detail);
    assert.equal(body.type, 'about:blank');
    assert.equal(typeof body.title, 'string');
    assert.equal(body.request_id, res.headers['x-request-id']);
    return body;
  }

  it('a valid body is accepted (the baseline)', async () => {
    const res = await post(JSON.stringify({ name: 'x', count: 2 }));
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { echoed: { name: 'x', count: 2 } });
  });

  it('malformed JSON → 400 problem', async () => {
    assertProblem(await post('{"name": "x",'), 400, 'Request body is not valid JSON.');
    assertProblem(await post('{name: x}'), 400, 'Request body is not valid JSON.');
  });

  it('an empty JSON body → 400 problem', async () => {
    assertProblem(await post(''), 400, 'Request body is empty but Content-Type is application/json.');
  });

  it('a JSON prototype-pollution key is refused', async () => {
    const res = await post('{"name": "x", "__proto__": {"admin": true}}');
    assert.equal(res.statusCode, 400);
    assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
  });

  it('a wrong content type → 415 problem', async () => {
    assertProblem(await post('name=x', 'text/plain'), 415, 'Unsupported media type; send application/json.');
    assertProblem(
      await post('name=x', 'application/x-www-form-urlencoded'),
      415,
      'Unsupported media type; send application/json.',
    );
    assertProblem(
      await post(
        '--b\r\nContent-Disposition: form-data; name="name"\r\n\r\nx\r\n--b--\r\n',
        'multipart/form-data; boundary=b',
      ),
      415,
      'Unsupported media type; send application/json.',
    );
    assertProblem(
      await post('<name>x</name>', 'application/xml'),
      415,
      'Unsupported media type; send application/json.',
    );
  });

  it('a body over SERVICE_BODY_LIMIT_BYTES → 413 problem', async () => {
    assertProblem(await post(JSON.stringify({ name: 'x'.repeat(LIMIT) })), 413, 'Request body is too large.');
  });

  it('a schema violation → 400 problem with errors per field', async () => {
    const body = assertProblem(await post(JSON.stringify({ count: 'many', extra: 1 })), 400, 'Request is invalid.');
    assert.ok(Array.isArray(body.errors) && body.errors.length > 0);
    for (const error of body.errors) {
      assert.equal(typeof error.field, 'string');
      assert.equal(typeof error.message, 'string');
    }
    assert.ok(
      body.errors.some((e: { field: string }) => e.field === 'name' || e.field === 'extra'),
      JSON.stringify(body.errors),
    );
  });

  it('an unhandled error → 500 problem that does not leak the message', async () => {
    const res = await t.inject({ url: '/api/v1/test-boom/' });
    const body = assertProblem(res, 500, 'Internal server error.');
    assert.doesNotMatch(JSON.stringify(body), /secret internal detail/);
  });

  it('a malformed percent-encoding in the path → 400 problem with a request id', async () => {
    const res = await t.inject({ url: '/api/v1/teams/%ZZ/', headers: { 'x-request-id': 'bad-url-1' } });
    assert.equal(res.headers['x-request-id'], 'bad-url-1');
    assertProblem(res, 400, 'The URL is malformed (invalid percent-encoding).');
  });

  it('an over-long path parameter → 404 problem (no such resource), not a bare 414', async () => {
    const res = await t.inject({ url: `/api/v1/teams/${'a'.repeat(300)}/` });
    assertProblem(res, 404, 'Not found.');
  });

  /** Writes raw bytes to the server and returns everything it answers before closing. */
  function raw(bytes: string): Promise<string> {
    const url = new URL(base);
    return new Promise((resolve, reject) => {
      const socket = net.connect(Number(url.port), url.hostname, () => socket.write(bytes));
      let data = '';
      socket.on('data', (chunk) => (data += chunk));
      socket.on('close', () => resolve(data));
      socket.on('error', (error: NodeJS.ErrnoException) =>
        error.code === 'ECONNRESET' ? resolve(data) : reject(error),
      );
    });
  }

  function parseRaw(response: string) {
    const [head, body] = response.split('\r\n\r\n');
    const headers = Object.fromEntries(
      head
        .split('\r\n')
        .slice(1)
        .map((line) => [line.split(':')[0].toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
    );
    return { status: Number(head.split(' ')[1]), headers, body: JSON.parse(body) };
  }

  it('bytes that are not HTTP → 400 problem with a request id, connection closed', async () => {
    const { status, headers, body } = parseRaw(await raw('HELLO THERE\r\n\r\n'));
    assert.equal(status, 400);
    assert.equal(headers['content-type'], 'application/problem+json; charset=utf-8');
    assert.equal(body.detail, 'The request is not valid HTTP.');
    assert.equal(body.request_id, headers['x-request-id']);
  });

  it('oversized request headers → 431 problem', async () => {
    const { status, body } = parseRaw(
      await raw(`GET /api/v1/me/ HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${'a'.repeat(20_000)}\r\n\r\n`),
    );
    assert.equal(status, 431);
    assert.equal(body.status, 431);
    assert.equal(body.detail, 'The request headers are too large.');
  });

  it('none of these crash the process: the same server answers after them over a real socket', async () => {
    const send = (body: string, contentType: string) =>
      fetch(`${base}/api/v1/test-echo/`, { method: 'POST', body, headers: { 'content-type': contentType } });
    const statuses = [];
    statuses.push((await send('{oops', 'application/json')).status);
    statuses.push((await send('x', 'text/plain')).status);
    statuses.push((await send(JSON.stringify({ name: 'y'.repeat(LIMIT * 4) }), 'application/json')).status);
    statuses.push((await fetch(`${base}/api/v1/test-boom/`)).status);
    statuses.push((await fetch(`${base}/api/v1/teams/%ZZ/`)).status);
    statuses.push(parseRaw(await raw('\x00\x01\x02 garbage\r\n\r\n')).status);
    assert.deepEqual(statuses, [400, 415, 413, 500, 400, 400]);
    const ok = await send(JSON.stringify({ name: 'still here' }), 'application/json');
    assert.equal(ok.status, 200);
    assert.deepEqual(await ok.json(), { echoed: { name: 'still here' } });
    const health = await fetch(`${base}/healthz`);
    assert.equal(health.status, 200);
  });
});

describe('GET with a stray Content-Type', () => {
  it('is not refused (only bodies are checked)', async () => {
    const t = await startApp();
    try {
      const res = await t.inject({ url: '/api/schema/', headers: { 'content-type': 'text/plain' } });
      assert.equal(res.statusCode, 200);
    } finally {
      await t.close();
    }
  });
});

describe('readiness without a database', () => {
  it('/readyz is 503 when the database does not answer, while /healthz (no I/O) stays 200', async () => {
    const { buildApp } = await import('../../src/app.ts');
    const { createContext } = await import('../../src/context.ts');
    const { loadConfig } = await import('../../src/config.ts');
    const fs = await import('node:fs');
    const os = await import('node:os');
    const path = await import('node:path');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-nodb-'));
    // Port 1 on loopback: nothing listens there, so every connection attempt is refused at once.
    const ctx = createContext(
      loadConfig({
        NODE_ENV: 'test',
        SERVICE_DATA_DIR: dir,
        DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
        SECRET_KEY: 'x'.repeat(40),
      }),
    );
    const app = await buildApp(ctx);
    try {
      await app.ready();
      const health = await app.inject({ url: '/healthz' });
      assert.equal(health.statusCode, 200);
      assert.deepEqual(health.json(), { status: 'ok' });
      const ready = await app.inject({ url: '/readyz' });
      assert.equal(ready.statusCode, 503);
      assert.equal(ready.json().status, 'unavailable');
    } finally {
      await app.close();
      await ctx.db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
