import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bearer, startApp, type TestApp } from '../helpers/app.ts';

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
    assert.equal(res.headers.allow, 'GET, HEAD');
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
    assert.equal(me.operationId, 'getMe');
    assert.deepEqual(me.security, [{ bearerAuth: ['read:profile'] }]);
    assert.ok(me.tags.length > 0 && me.summary);
    for (const [path, operations] of Object.entries<Record<string, { operationId?: string; responses?: object }>>(doc.paths)) {
      for (const [method, op] of Object.entries(operations)) {
        assert.ok(op.operationId, `${method} ${path} has an operationId`);
        assert.ok(op.responses, `${method} ${path} has responses`);
      }
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
