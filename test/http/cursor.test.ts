// Cursor pagination as a client sees it, on a test-only table and list route: every row exactly
// once in both directions while rows are inserted at the head, ties on created time, page_size
// rules, links that keep the other parameters, tampered cursors refused.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import type { AppContext, TypedApp } from '../../src/app-context.ts';
import { CursorQuery, cursorPage } from '../../src/http/cursor.ts';
import { startApp, type TestApp } from '../support/app.ts';

interface Item {
  id: number;
  grp: string;
  created_at: string;
}

const ROWS = 237;
// Five rows share each created time, so the id must break ties.
const createdAt = (i: number) => new Date(Date.UTC(2026, 0, 1) + Math.floor(i / 5) * 1000).toISOString();

async function createItems(ctx: AppContext) {
  const db = ctx.db.kysely;
  await db.schema
    .createTable('cursor_items')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('grp', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  for (let i = 1; i <= ROWS; i++) {
    await sql`insert into cursor_items (id, grp, created_at) values (${i}, ${'a'}, ${createdAt(i)})`.execute(db);
  }
  await sql`insert into cursor_items (id, grp, created_at) values (${10_000}, ${'b'}, ${createdAt(1)})`.execute(db);
}

function registerList(app: TypedApp, ctx: AppContext) {
  for (const url of ['/api/v1/test-cursor/', '/api/v1/test-cursor-other/']) {
    app.get(url, { schema: { querystring: CursorQuery } }, async (request) => {
      const group = (request.query as { grp?: string }).grp ?? 'a';
      const query = (ctx.db.kysely as any)
        .selectFrom('cursor_items as c')
        .select(['c.id', 'c.grp', 'c.created_at'])
        .where('c.grp', '=', group);
      const page = await cursorPage<Item>({
        request,
        query,
        baseUrl: ctx.config.baseUrl,
        secret: ctx.config.secretKey!,
        createdAtColumn: 'c.created_at',
        idColumn: 'c.id',
      });
      return { ...page, results: page.results.map((row) => ({ id: Number(row.id), created_at: row.created_at })) };
    });
  }
}

/** The expected order: created time descending, id descending. */
const ordered = (ids: number[], created: (id: number) => string) =>
  [...ids].sort((x, y) => (created(x) === created(y) ? y - x : created(x) < created(y) ? 1 : -1));

describe('cursor pagination', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp(
      { SERVICE_THROTTLE_ANON: '100000/hour' },
      {
        beforeReady: async (app, ctx) => {
          await createItems(ctx);
          registerList(app, ctx);
        },
      },
    );
  });
  after(() => t.close());

  const get = async (url: string) => {
    const res = await t.inject({ url: url.replace('http://testserver', '') });
    return {
      res,
      body: res.json() as {
        next: string | null;
        previous: string | null;
        results: Array<{ id: number; created_at: string }>;
      },
    };
  };

  it('forward over the whole set: each row once, in created-desc/id-desc order, ties included', async () => {
    const seen: number[] = [];
    let { res, body } = await get('/api/v1/test-cursor/?page_size=20&grp=a');
    assert.equal(res.statusCode, 200);
    assert.deepEqual(Object.keys(body), ['next', 'previous', 'results']);
    assert.equal(body.previous, null);
    let pages = 1;
    seen.push(...body.results.map((r) => r.id));
    while (body.next) {
      assert.match(
        body.next,
        /^http:\/\/testserver\/api\/v1\/test-cursor\/\?page_size=20&grp=a&cursor=[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/,
      );
      ({ res, body } = await get(body.next));
      assert.equal(res.statusCode, 200);
      assert.ok(body.previous, 'a later page links back');
      seen.push(...body.results.map((r) => r.id));
      pages++;
    }
    assert.equal(pages, Math.ceil(ROWS / 20));
    const all = Array.from({ length: ROWS }, (_, i) => i + 1);
    assert.deepEqual(seen, ordered(all, createdAt));
  });

  it('forward, then backward, with rows inserted at the head meanwhile: no row repeated or skipped', async () => {
    const db = t.ctx.db.kysely;
    const original = ordered(
      Array.from({ length: ROWS }, (_, i) => i + 1),
      createdAt,
    );
    const pageSize = 25;
    const forward: Array<{ previous: string | null; ids: number[] }> = [];
    let { body } = await get(`/api/v1/test-cursor/?page_size=${pageSize}`);
    forward.push({ previous: body.previous, ids: body.results.map((r) => r.id) });
    let inserted = 0;
    const headCreated = new Map<number, string>();
    while (body.next) {
      // New rows arrive at the head (newer than everything) between page loads.
      for (let k = 0; k < 3; k++) {
        const id = 20_000 + inserted++;
        const created = new Date(Date.UTC(2027, 0, 1) + inserted * 1000).toISOString();
        headCreated.set(id, created);
        await sql`insert into cursor_items (id, grp, created_at) values (${id}, ${'a'}, ${created})`.execute(db);
      }
      ({ body } = await get(body.next));
      forward.push({ previous: body.previous, ids: body.results.map((r) => r.id) });
    }
    assert.deepEqual(
      forward.flatMap((p) => p.ids),
      original,
      'forward: the original rows, each once',
    );

    // Backward from the last page until there is no previous page.
    const backward: number[][] = [];
    let link = forward.at(-1)!.previous;
    while (link) {
      const page = await get(link);
      assert.equal(page.res.statusCode, 200);
      backward.push(page.body.results.map((r) => r.id));
      // Each backward page is in order and ends right above the page it came from.
      link = page.body.previous;
    }
    assert.ok(backward.length >= Math.ceil(ROWS / pageSize), `walked back ${backward.length} pages`);
    assert.ok(headCreated.size >= 3);
    const lastPage = forward.at(-1)!.ids;
    const walkedBack = backward.reverse().flat().concat(lastPage);
    const expectedNow = [...ordered([...headCreated.keys()], (id) => headCreated.get(id)!), ...original];
    assert.deepEqual(walkedBack, expectedNow, 'backward: every row once, the new head rows on the newest page(s)');
  });

  it('page_size: default 50, larger than 200 clamped to 200', async () => {
    assert.equal((await get('/api/v1/test-cursor/')).body.results.length, 50);
    assert.equal((await get('/api/v1/test-cursor/?page_size=500')).body.results.length, 200);
    assert.equal((await get('/api/v1/test-cursor/?page_size=99999999999999999999999')).body.results.length, 200);
    assert.equal((await get('/api/v1/test-cursor/?page_size=7')).body.results.length, 7);
  });

  for (const value of ['0', '-1', 'abc', '', '1.5', '1e3', '00']) {
    it(`page_size=${JSON.stringify(value)} is 400`, async () => {
      const { res, body } = await get(`/api/v1/test-cursor/?page_size=${encodeURIComponent(value)}`);
      assert.equal(res.statusCode, 400);
      assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
      assert.equal((body as any).errors[0].field, 'page_size');
    });
  }

  it('an empty list: no links, no results', async () => {
    const { res, body } = await get('/api/v1/test-cursor/?grp=none');
    assert.equal(res.statusCode, 200);
    assert.deepEqual(body, { next: null, previous: null, results: [] });
  });

  it('a tampered, foreign or malformed cursor is 400, never a wrong page', async () => {
    const { body } = await get('/api/v1/test-cursor/?page_size=5');
    const cursor = new URL(body.next!).searchParams.get('cursor')!;
    const [payload, mac] = cursor.split('.');
    const decoded = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const forged = Buffer.from(JSON.stringify([decoded[0], decoded[1], decoded[2] - 1])).toString('base64url');
    const flip = (text: string) => (text[0] === 'A' ? 'B' : 'A') + text.slice(1);
    for (const bad of [
      `${forged}.${mac}`,
      `${payload}.${flip(mac)}`,
      `${flip(payload)}.${mac}`,
      payload,
      'abc',
      '.',
      `${payload}.`,
    ]) {
      const { res, body: problem } = await get(`/api/v1/test-cursor/?cursor=${encodeURIComponent(bad)}`);
      assert.equal(res.statusCode, 400, bad);
      assert.equal((problem as any).errors[0].field, 'cursor');
    }
    // A valid cursor of another list is refused too (the tag covers the path).
    const foreign = await get(`/api/v1/test-cursor-other/?cursor=${encodeURIComponent(cursor)}`);
    assert.equal(foreign.res.statusCode, 400);
    // The genuine one still works.
    assert.equal((await get(body.next!)).res.statusCode, 200);
  });
});
