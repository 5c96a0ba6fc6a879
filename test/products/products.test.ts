// The demo resource: a seeded, read-only, paginated list behind the read:products scope.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bearer, startApp, type TestApp } from '../support/app.ts';

describe('GET /api/v1/products/', () => {
  let t: TestApp;
  let token: string;
  before(async () => {
    t = await startApp();
    token = await t.token((await t.user()).id, ['read:products']);
  });
  after(() => t.close());

  it('returns the seeded products in a page-number envelope, ordered by id', async () => {
    const res = await t.inject({ url: '/api/v1/products/', headers: bearer(token) });
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.deepEqual(Object.keys(body), ['count', 'next', 'previous', 'results']);
    assert.equal(body.count, 5);
    assert.equal(body.next, null);
    assert.equal(body.previous, null);
    assert.deepEqual(body.results[0], {
      id: 1,
      name: 'Starter plan',
      sku: 'PLAN-STARTER',
      price: '9.00',
      created_at: '2026-01-01T00:00:00.000Z',
    });
    assert.deepEqual(
      body.results.map((p: { sku: string }) => p.sku),
      ['PLAN-STARTER', 'PLAN-TEAM', 'PLAN-BUSINESS', 'ADDON-SEAT', 'ADDON-SUPPORT'],
    );
    for (const product of body.results) {
      assert.deepEqual(Object.keys(product), ['id', 'name', 'sku', 'price', 'created_at']);
      assert.equal(typeof product.id, 'number');
      assert.match(product.price, /^\d+\.\d{2}$/);
    }
    const ids = body.results.map((p: { id: number }) => p.id);
    assert.deepEqual(
      ids,
      [...ids].sort((a: number, b: number) => a - b),
    );
  });

  it('rows added later appear, and page 2 exists once there are 51', async () => {
    const db = t.ctx.db.kysely;
    for (let i = 0; i < 46; i++) {
      await db
        .insertInto('products')
        .values({ name: `Extra ${i}`, sku: `EXTRA-${i}`, price: '1.00', created_at: new Date().toISOString() })
        .execute();
    }
    const first = (await t.inject({ url: '/api/v1/products/', headers: bearer(token) })).json();
    assert.equal(first.count, 51);
    assert.equal(first.results.length, 50);
    assert.equal(first.next, 'http://testserver/api/v1/products/?page=2');
    const second = (await t.inject({ url: '/api/v1/products/?page=2', headers: bearer(token) })).json();
    assert.deepEqual(
      second.results.map((p: { sku: string }) => p.sku),
      ['EXTRA-45'],
    );
  });

  it('needs read:products (403 with another scope, 401 without a token)', async () => {
    const other = await t.token((await t.user()).id, ['read:teams']);
    const forbidden = await t.inject({ url: '/api/v1/products/', headers: bearer(other) });
    assert.equal(forbidden.statusCode, 403);
    assert.equal(forbidden.json().detail, 'This credential lacks the "read:products" scope.');
    assert.equal((await t.inject({ url: '/api/v1/products/' })).statusCode, 401);
  });

  it('an invalid page is 404 "Invalid page."', async () => {
    const res = await t.inject({ url: '/api/v1/products/?page=abc', headers: bearer(token) });
    assert.equal(res.statusCode, 404);
    assert.equal(res.json().detail, 'Invalid page.');
  });
});
