import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startApp, type TestApp } from '../support/app.ts';
import { computeCsrfToken, csrfTokenMatches } from '../../src/web/csrf.ts';
import { eta } from '../../src/web/render.ts';

describe('web layer', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp(
      {},
      {
        beforeReady: (app) => {
          // A page of "another capability", rendered from its own folder with the shared layout.
          app.get('/test-page/', async (request, reply) => {
            const { renderPage } = await import('../../src/web/render.ts');
            return renderPage(reply, 'accounts/views/message', {
              title: 'A <title>',
              lines: ['<script>alert(1)</script>'],
              link: null,
            });
          });
        },
      },
    );
  });
  after(() => t.close());

  it('escapes by default (Eta autoEscape)', () => {
    assert.equal(eta.renderString('<%= it.x %>', { x: '<b>"&\'' }), '&lt;b&gt;&quot;&amp;&#39;');
  });

  it("renders any folder's template in the layout, escaped, with safety headers and the stylesheet", async () => {
    const res = await t.inject({ url: '/test-page/' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.equal(res.headers['x-frame-options'], 'DENY');
    assert.match(String(res.headers['content-security-policy']), /frame-ancestors 'none'/);
    assert.match(res.body, /<title>A &lt;title&gt; · svc<\/title>/);
    assert.match(res.body, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
    assert.doesNotMatch(res.body, /<script>alert/);
    const css = /href="(\/static\/style\.[0-9a-f]{12}\.css)"/.exec(res.body)![1];
    const sheet = await t.inject({ url: css });
    assert.equal(sheet.statusCode, 200);
    assert.equal(sheet.headers['content-type'], 'text/css; charset=utf-8');
    assert.match(String(sheet.headers['cache-control']), /immutable/);
    assert.match(sheet.body, /Water\.css|--background-body/);
    // A new browser gets its CSRF seed cookie.
    const seed = ([] as string[])
      .concat(res.headers['set-cookie'] as string[])
      .find((line) => line.startsWith('svc_csrf='));
    assert.match(seed!, /HttpOnly/);
    assert.match(seed!, /SameSite=Lax/);
  });

  it('over real HTTP a new browser gets exactly one CSRF seed cookie', async () => {
    const base = await t.listen();
    const res = await fetch(`${base}/accounts/login/`);
    await res.text();
    const cookies = res.headers.getSetCookie();
    assert.equal(cookies.filter((line) => line.startsWith('svc_csrf=')).length, 1, cookies.join(' | '));
    const again = await fetch(`${base}/accounts/login/`, { headers: { cookie: cookies[0].split(';')[0] } });
    await again.text();
    assert.deepEqual(again.headers.getSetCookie(), []);
  });

  it('API paths get no page state and no CSRF cookie', async () => {
    const res = await t.inject({ url: '/api/v1/me/' });
    assert.equal(res.statusCode, 401);
    assert.equal(res.headers['set-cookie'], undefined);
  });

  it('CSRF tokens are bound to the seed and the session', () => {
    const key = 'k'.repeat(40);
    const token = computeCsrfToken(key, 'seed', 'session-a');
    assert.ok(csrfTokenMatches(key, 'seed', 'session-a', token));
    assert.ok(!csrfTokenMatches(key, 'seed', 'session-b', token));
    assert.ok(!csrfTokenMatches(key, 'other-seed', 'session-a', token));
    assert.ok(!csrfTokenMatches(key, undefined, 'session-a', token));
    assert.ok(!csrfTokenMatches(key, 'seed', 'session-a', ['x']));
  });
});
