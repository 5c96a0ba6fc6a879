// Route schemas are compiled on a route's first request (src/http/lazy-compilers.ts). These tests
// make sure that no schema waits to fail on its first request, and that a first request gets what
// the default compilers give: coercion (not of bodies), defaults, the 400 problem with its `errors`,
// the serialiser.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { compileDeferredSchemas } from '../../src/http/lazy-compilers.ts';
import { startApp, type TestApp } from '../support/app.ts';

describe('route schemas compiled on first use', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp(
      {},
      {
        beforeReady(app) {
          app.get(
            '/api/v1/test-lazy/',
            {
              schema: {
                querystring: {
                  type: 'object',
                  properties: {
                    n: { type: 'integer', minimum: 1 },
                    tag: { type: 'array', items: { type: 'string' } },
                    mode: { type: 'string', default: 'plain' },
                  },
                  additionalProperties: false,
                },
                response: {
                  200: {
                    type: 'object',
                    properties: {
                      n: { type: 'integer' },
                      tag: { type: 'array', items: { type: 'string' } },
                      mode: { type: 'string' },
                    },
                  },
                },
              },
            },
            // The undeclared `secret` is dropped by the response serialiser.
            async (request) => Object.assign({ secret: 'not serialised' }, request.query),
          );
          app.post(
            '/api/v1/test-lazy/',
            {
              schema: {
                body: {
                  type: 'object',
                  properties: { n: { type: 'integer' }, mode: { type: 'string', default: 'plain' } },
                  additionalProperties: false,
                },
                response: { 200: { type: 'object', properties: { n: { type: 'integer' }, mode: { type: 'string' } } } },
              },
            },
            async (request) => request.body,
          );
        },
      },
    );
  });
  after(() => t.close());

  it('the first request of a route is coerced, defaulted and serialised by its schema', async () => {
    const first = await t.inject({ url: '/api/v1/test-lazy/?n=3&tag=a' });
    assert.equal(first.statusCode, 200);
    assert.deepEqual(first.json(), { n: 3, tag: ['a'], mode: 'plain' });
  });

  it('the first request body is defaulted but taken as written: no coercion', async () => {
    const wrong = await t.inject({ method: 'POST', url: '/api/v1/test-lazy/', payload: { n: '3' } });
    assert.equal(wrong.statusCode, 400);
    assert.deepEqual(wrong.json().errors, [{ field: 'n', message: 'must be integer' }]);
    const right = await t.inject({ method: 'POST', url: '/api/v1/test-lazy/', payload: { n: 3 } });
    assert.equal(right.statusCode, 200);
    assert.deepEqual(right.json(), { n: 3, mode: 'plain' });
  });

  it('an invalid first request on another route is the 400 problem with its errors', async () => {
    const response = await t.inject({ method: 'POST', url: '/api/auth/token/', payload: { email: 'a@example.com' } });
    assert.equal(response.statusCode, 400);
    const body = response.json();
    assert.equal(body.detail, 'Request is invalid.');
    assert.deepEqual(body.errors, [{ field: 'password', message: 'This field is required.' }]);
  });

  it('every other schema of the app compiles', () => {
    assert.ok(compileDeferredSchemas(t.app) > 20);
    assert.equal(compileDeferredSchemas(t.app), 0);
  });
});
