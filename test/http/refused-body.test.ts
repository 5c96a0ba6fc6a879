// A body over the limit gets its 413, over a real socket, whether the client declares the length or
// sends chunks. The client here is the hardest kind: it writes its whole body whatever it reads
// (a half-open socket, as a client that reads only after writing). The whole answer arrives, none of
// its writes fails, the connection ends with a FIN, and a client that never finishes cannot hold the
// connection.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { DRAIN_IDLE_MS, DRAIN_MAX_MS } from '../../src/http/refused-body.ts';
import { bearer, startApp, type TestApp } from '../support/app.ts';

const EIGHT_MIB = 8 * 1024 * 1024;
const CHUNK = Buffer.alloc(64 * 1024, 'a');

interface Exchange {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The whole answer (head and Content-Length bytes of body) was read. */
  complete: boolean;
  /** The server ended the connection with a FIN (not a reset). */
  ended: boolean;
  /** An error on the client's socket (EPIPE, ECONNRESET), if any. */
  error: string | null;
  /** The client wrote everything it meant to. */
  sentAll: boolean;
  /** When the answer was complete and when the connection closed, in ms after the head was sent. */
  answeredAfter: number | null;
  closedAfter: number;
}

type Sender = (socket: net.Socket) => Promise<void> | void;

/**
 * Sends `head` and whatever `send` writes (then ends its side), and reads until the connection
 * closes; with `stopWhenAnswered`, closes it as soon as the answer is complete.
 */
function exchange(port: number, head: string, send: Sender, stopWhenAnswered = false): Promise<Exchange> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    let received = Buffer.alloc(0);
    let ended = false;
    let sentAll = false;
    let error: string | null = null;
    let answeredAfter: number | null = null;
    const started = Date.now();
    const parse = () => {
      const text = received.toString('latin1');
      const headEnd = text.indexOf('\r\n\r\n');
      if (headEnd < 0) return null;
      const lines = text.slice(0, headEnd).split('\r\n');
      const headers = Object.fromEntries(
        lines
          .slice(1)
          .map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
      );
      const length = Number(headers['content-length']);
      const body = received.subarray(headEnd + 4).toString('utf8');
      return {
        status: Number(lines[0].split(' ')[1]),
        headers,
        body,
        complete: received.length - headEnd - 4 >= length,
      };
    };
    socket.on('data', (data) => {
      received = Buffer.concat([received, data]);
      if (answeredAfter === null && parse()?.complete) {
        answeredAfter = Date.now() - started;
        if (stopWhenAnswered) socket.destroy();
      }
    });
    socket.on('end', () => (ended = true));
    socket.on('error', (e: NodeJS.ErrnoException) => (error = e.code ?? e.message));
    socket.on('close', () => {
      const parsed = parse() ?? { status: 0, headers: {}, body: '', complete: false };
      resolve({ ...parsed, ended, error, sentAll, answeredAfter, closedAfter: Date.now() - started });
    });
    socket.write(head);
    void Promise.resolve(send(socket)).then(() => {
      if (socket.destroyed) return;
      sentAll = true;
      socket.end();
    });
  });
}

/** Writes `bytes` in 64 KiB pieces, each after the previous was taken (a client that only reads later). */
async function writeAll(socket: net.Socket, total: number, frame: (piece: Buffer) => Buffer[] = (piece) => [piece]) {
  for (let sent = 0; sent < total && !socket.destroyed; sent += CHUNK.length) {
    const piece = CHUNK.subarray(0, Math.min(CHUNK.length, total - sent));
    for (const part of frame(piece)) {
      if (!socket.write(part)) await drainedOrClosed(socket);
    }
  }
}

function drainedOrClosed(socket: net.Socket) {
  return new Promise<void>((resolve) => {
    const done = () => {
      socket.off('drain', done);
      socket.off('close', done);
      resolve();
    };
    socket.on('drain', done);
    socket.on('close', done);
  });
}

/** A client that keeps its side of the connection open without sending anything more. */
const never = () => new Promise<void>(() => {});

const chunked = (piece: Buffer) => [Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')];

const sendLength = (total: number) => (socket: net.Socket) => writeAll(socket, total);
const sendChunked = (total: number) => async (socket: net.Socket) => {
  await writeAll(socket, total, chunked);
  if (!socket.destroyed) socket.write('0\r\n\r\n');
};

describe('a body over the limit gets its 413 over a real socket', () => {
  let t: TestApp;
  let port: number;
  let token: string;
  let limit: number;
  before(async () => {
    t = await startApp({
      SERVICE_MAILPROVIDER_WEBHOOK_ENABLED: 'true',
      SERVICE_THROTTLE_AUTH: '100000/minute',
      SERVICE_THROTTLE_ANON: '100000/hour',
    });
    port = Number(new URL(await t.listen()).port);
    limit = t.ctx.config.bodyLimitBytes;
    const user = await t.user();
    token = await t.token(user.id, ['write:teams', 'read:teams']);
  });
  after(() => t.close());

  const endpoints = [
    { label: 'an API route', path: '/api/v1/teams/', type: 'application/json', auth: true, problem: true, api: true },
    {
      label: 'the JWT endpoint',
      path: '/api/auth/token/',
      type: 'application/json',
      auth: false,
      problem: true,
      api: true,
    },
    {
      label: 'a page form',
      path: '/accounts/login/',
      type: 'application/x-www-form-urlencoded',
      auth: false,
      problem: true,
      api: false,
    },
    {
      label: 'the SNS intake',
      path: '/webhooks/mailprovider/',
      type: 'text/plain',
      auth: false,
      problem: true,
      api: false,
    },
    // The OAuth endpoints answer in RFC 6749's error shape, not problem details.
    {
      label: 'the OAuth token endpoint',
      path: '/o/token/',
      type: 'application/x-www-form-urlencoded',
      auth: false,
      problem: false,
      api: false,
    },
  ];

  for (const endpoint of endpoints) {
    const head = (framing: string) =>
      `POST ${endpoint.path} HTTP/1.1\r\nHost: testserver\r\nContent-Type: ${endpoint.type}\r\n` +
      (endpoint.auth ? `Authorization: ${bearer(token).authorization}\r\n` : '') +
      `X-Request-ID: big-body-1\r\n${framing}\r\n`;

    const assertRefusal = (result: Exchange, round: string) => {
      const where = `${endpoint.path} ${round}: ${JSON.stringify({ ...result, body: result.body.slice(0, 200) })}`;
      assert.equal(result.status, 413, where);
      assert.equal(result.complete, true, where);
      assert.equal(result.error, null, where);
      assert.equal(result.sentAll, true, where);
      assert.equal(result.ended, true, where);
      assert.equal(result.headers.connection, 'close', where);
      assert.equal(result.headers['x-request-id'], 'big-body-1', where);
      const body = JSON.parse(result.body);
      if (endpoint.problem) {
        assert.equal(result.headers['content-type'], 'application/problem+json; charset=utf-8', where);
        assert.deepEqual(body, {
          type: 'about:blank',
          title: 'Payload Too Large',
          status: 413,
          detail: 'Request body is too large.',
          request_id: 'big-body-1',
        });
      } else {
        assert.deepEqual(body, { error: 'invalid_request', error_description: 'request body too large' });
      }
      if (endpoint.api) {
        for (const name of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'])
          assert.match(result.headers[name] ?? '', /^\d+$/, `${name} ${where}`);
      }
    };

    it(`${endpoint.label}: 8 MiB with Content-Length, 20 times in a row, each answer read whole`, async () => {
      for (let round = 1; round <= 20; round++) {
        assertRefusal(
          await exchange(port, head(`Content-Length: ${EIGHT_MIB}\r\n`), sendLength(EIGHT_MIB)),
          `length #${round}`,
        );
      }
    });

    it(`${endpoint.label}: 8 MiB chunked, 20 times in a row, each answer read whole`, async () => {
      for (let round = 1; round <= 20; round++) {
        assertRefusal(
          await exchange(port, head('Transfer-Encoding: chunked\r\n'), sendChunked(EIGHT_MIB)),
          `chunked #${round}`,
        );
      }
    });
  }

  it('a declared length over the limit is answered before any of the body is sent', async () => {
    const result = await exchange(
      port,
      `POST /api/v1/teams/ HTTP/1.1\r\nHost: testserver\r\nContent-Type: application/json\r\nAuthorization: Bearer ${token}\r\nContent-Length: ${EIGHT_MIB}\r\n\r\n`,
      never,
      true,
    );
    assert.equal(result.status, 413, JSON.stringify(result));
    assert.equal(result.complete, true);
  });

  it('a chunked body is answered as soon as it passes the limit, before it ends', async () => {
    const result = await exchange(
      port,
      `POST /accounts/login/ HTTP/1.1\r\nHost: testserver\r\nContent-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\r\n`,
      // Just past the limit, then nothing more (no last chunk, no end): only an early answer can arrive.
      (socket) => writeAll(socket, limit + CHUNK.length, chunked).then(never),
      true,
    );
    assert.equal(result.status, 413);
    assert.equal(result.complete, true);
  });

  it('a client that sends nothing more after the answer is disconnected after the idle bound', async () => {
    // Silent past the idle bound, then a byte every 100 ms: the server has closed, so the first is
    // answered with a reset and the next write fails.
    let probe: NodeJS.Timeout | undefined;
    const silentThenProbe = (socket: net.Socket) => {
      setTimeout(() => {
        probe = setInterval(() => socket.writable && socket.write('a'), 100);
        socket.once('close', () => clearInterval(probe));
      }, DRAIN_IDLE_MS + 1500);
      return never();
    };
    const result = await exchange(
      port,
      `POST /api/auth/token/ HTTP/1.1\r\nHost: testserver\r\nContent-Type: application/json\r\nContent-Length: ${EIGHT_MIB}\r\n\r\n`,
      silentThenProbe,
    );
    clearInterval(probe);
    assert.equal(result.status, 413);
    assert.equal(result.complete, true);
    assert.equal(result.ended, true);
    assert.ok(result.answeredAfter !== null && result.answeredAfter < DRAIN_IDLE_MS, JSON.stringify(result));
    assert.ok(result.error === 'ECONNRESET' || result.error === 'EPIPE', JSON.stringify(result));
    assert.ok(result.closedAfter < DRAIN_IDLE_MS + 4000, JSON.stringify(result));
  });

  it('a client that trickles its body forever is disconnected after the total bound', async () => {
    let timer: NodeJS.Timeout | undefined;
    const trickle = (socket: net.Socket) => {
      timer = setInterval(() => socket.writable && socket.write('a'), 100);
      socket.once('close', () => clearInterval(timer));
      return never();
    };
    const result = await exchange(
      port,
      `POST /api/auth/token/ HTTP/1.1\r\nHost: testserver\r\nContent-Type: application/json\r\nContent-Length: ${EIGHT_MIB}\r\n\r\n`,
      trickle,
    );
    clearInterval(timer);
    assert.equal(result.status, 413);
    assert.equal(result.complete, true);
    assert.ok(
      result.closedAfter >= DRAIN_MAX_MS - 50 && result.closedAfter < DRAIN_MAX_MS + 2000,
      JSON.stringify({ ...result, body: '' }),
    );
  });

  it('a request pipelined behind a refused body on the same connection is not run', async () => {
    const team = JSON.stringify({ name: 'Pipelined behind a refusal' });
    const body = Buffer.alloc(2 * limit, 'a');
    const pipelined = `POST /api/v1/teams/ HTTP/1.1\r\nHost: testserver\r\nContent-Type: application/json\r\nAuthorization: Bearer ${token}\r\nContent-Length: ${team.length}\r\n\r\n${team}`;
    const result = await exchange(
      port,
      `POST /api/v1/teams/ HTTP/1.1\r\nHost: testserver\r\nContent-Type: application/json\r\nAuthorization: Bearer ${token}\r\nContent-Length: ${body.length}\r\n\r\n`,
      (socket) => void socket.write(Buffer.concat([body, Buffer.from(pipelined)])),
    );
    assert.equal(result.status, 413);
    assert.equal(result.complete, true);
    assert.doesNotMatch(result.body, /HTTP\/1\.1/);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const teams = await t.inject({ url: '/api/v1/teams/', headers: bearer(token) });
    assert.equal(teams.statusCode, 200);
    assert.equal(
      teams.json().results.some((row: { name: string }) => row.name === 'Pipelined behind a refusal'),
      false,
    );
  });

  it('the server stays healthy: a normal request on a new connection works', async () => {
    const base = `http://127.0.0.1:${port}`;
    assert.equal((await fetch(`${base}/healthz`)).status, 200);
    const created = await fetch(`${base}/api/v1/teams/`, {
      method: 'POST',
      headers: { ...bearer(token), 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'After the refusals' }),
    });
    assert.equal(created.status, 201);
  });
});
