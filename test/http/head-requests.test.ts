// HEAD is answered by the path's GET route (src/http/head-requests.ts): the GET's status and headers,
// no content, and the method the client sent wherever the service reads it.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { bearer, startApp, type TestApp } from '../support/app.ts';

/** Writes raw HTTP/1.1 and reads until the server closes the connection. */
function exchange(base: URL, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(base.port), base.hostname, () => socket.write(bytes));
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => (received += chunk));
    socket.on('end', () => resolve(received));
    socket.on('error', reject);
  });
}

describe('HEAD requests', () => {
  let t: TestApp;
  let token: string;
  let base: URL;
  before(async () => {
    t = await startApp();
    const user = await t.user({ firstName: 'Hedda' });
    token = await t.token(user.id, ['read:profile']);
    base = new URL(await t.listen());
  });
  after(() => t.close());

  it('gets the GET’s status and headers with no content, over a real connection', async () => {
    const get = await fetch(new URL('/api/v1/me/', base), { headers: bearer(token) });
    const getBody = await get.text();
    const head = await fetch(new URL('/api/v1/me/', base), { method: 'HEAD', headers: bearer(token) });
    assert.equal(head.status, 200);
    assert.equal(await head.text(), '');
    assert.equal(head.headers.get('content-type'), get.headers.get('content-type'));
    assert.equal(head.headers.get('content-length'), String(Buffer.byteLength(getBody)));
    assert.match(String(head.headers.get('x-request-id')), /^[0-9a-f-]{36}$/);
    assert.ok(head.headers.get('ratelimit-policy'), 'the rate-limit fields of an API answer');
    // Counted like the GET: one request of the same budget.
    assert.equal(
      Number(head.headers.get('x-ratelimit-remaining')),
      Number(get.headers.get('x-ratelimit-remaining')) - 1,
    );
  });

  it('writes no content bytes: a request pipelined behind it is read as the next response', async () => {
    const received = await exchange(
      base,
      `HEAD /api/v1/me/ HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n\r\n` +
        'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    );
    const [headHead, rest] = received.split('\r\n\r\n', 2);
    assert.match(headHead, /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(headHead, /\r\ncontent-length: [1-9]\d*\r\n/i);
    assert.match(rest, /^HTTP\/1\.1 200 OK\r\n/, 'the second response starts right after the first one’s headers');
  });

  it('a refusal keeps its status and headers: 401 with the challenge, no content', async () => {
    const head = await fetch(new URL('/api/v1/me/', base), { method: 'HEAD' });
    assert.equal(head.status, 401);
    assert.match(String(head.headers.get('www-authenticate')), /^Bearer /);
    assert.equal(head.headers.get('content-type'), 'application/problem+json; charset=utf-8');
    assert.equal(await head.text(), '');
  });

  it('a page answers HEAD with its HTML headers', async () => {
    const head = await fetch(new URL('/accounts/login/', base), { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.match(String(head.headers.get('content-type')), /^text\/html/);
    assert.ok(Number(head.headers.get('content-length')) > 0);
    assert.equal(await head.text(), '');
  });

  it('a path without a GET is 405 for HEAD, and a GET path lists HEAD in its Allow', async () => {
    const head = await t.inject({ method: 'HEAD', url: '/api/auth/token/' });
    assert.equal(head.statusCode, 405);
    assert.equal(head.headers.allow, 'POST');
    assert.equal(head.payload, '');
    const put = await t.inject({ method: 'PUT', url: '/api/v1/me/', headers: bearer(token) });
    assert.equal(put.statusCode, 405);
    assert.equal(put.headers.allow, 'GET, HEAD, PATCH');
    const unknown = await t.inject({ method: 'HEAD', url: '/api/v1/nowhere/' });
    assert.equal(unknown.statusCode, 404);
  });

  it('through app.inject as over a socket, and handlers see the method HEAD', async () => {
    const seen: string[] = [];
    const u = await startApp(
      {},
      {
        beforeReady: (app) => {
          app.get('/test-only/method/', async (request) => {
            seen.push(request.method);
            return { method: request.method };
          });
        },
      },
    );
    try {
      const head = await u.inject({ method: 'HEAD', url: '/test-only/method/' });
      assert.equal(head.statusCode, 200);
      assert.equal(head.payload, '');
      assert.equal(head.headers['content-length'], String(Buffer.byteLength('{"method":"HEAD"}')));
      await u.inject({ url: '/test-only/method/' });
      assert.deepEqual(seen, ['HEAD', 'GET']);
    } finally {
      await u.close();
    }
  });
});
