// The delivery client against real HTTPS servers: the delivery timeout bounds the whole attempt
// (an answer that trickles in byte by byte is cut off at the deadline, not reset by each chunk),
// only the first 1 KB of an answer is kept, and every connection's certificate is verified.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { DeliveryClient, MAX_RESPONSE_BYTES, describeFailure } from '../../src/webhooks/http-client.ts';
import { AddressGuard } from '../../src/webhooks/ssrf.ts';
import { testPki } from '../support/tls.ts';

describe('delivery client', () => {
  let server: https.Server;
  let url: URL;
  let client: DeliveryClient;
  let roomy: DeliveryClient;
  let ca: string;
  const sockets = new Set<import('node:stream').Duplex>();

  before(async () => {
    const { certPem, keyPem, caPem } = await testPki();
    ca = caPem;
    server = https.createServer({ cert: certPem, key: keyPem }, (req, res) => {
      req.resume();
      req.on('end', () => {
        if (req.url === '/drip') {
          // Headers at once, then one byte every 100 ms, forever: each chunk is well inside
          // undici's body timeout, so only the whole-attempt deadline can end it.
          res.writeHead(200, { 'content-type': 'text/plain' });
          const timer = setInterval(() => res.write('x'), 100);
          res.on('close', () => clearInterval(timer));
        } else {
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.end('\0' + 'y'.repeat(5000));
        }
      });
    });
    server.on('connection', (socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = new URL(`https://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    client = new DeliveryClient({
      guard: new AddressGuard({ allowedCidrs: ['127.0.0.1/32'], dnsServers: [] }),
      timeoutMs: 1000,
      ca: caPem,
    });
    // For the tests that are not about the deadline: twenty TLS handshakes at once on a loaded machine
    // can take longer than the 1 s the trickle test needs.
    roomy = new DeliveryClient({
      guard: new AddressGuard({ allowedCidrs: ['127.0.0.1/32'], dnsServers: [] }),
      timeoutMs: 30_000,
      ca: caPem,
    });
  });

  after(async () => {
    await client.close();
    await roomy.close();
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  it('ends an attempt whose answer trickles in at the delivery timeout, as "Timed out."', async () => {
    const started = Date.now();
    const error = await client.post(new URL('/drip', url), { 'content-type': 'application/json' }, '{}').then(
      () => assert.fail('a trickling answer must not complete'),
      (err: unknown) => err,
    );
    const took = Date.now() - started;
    assert.equal(describeFailure(error), 'Timed out.');
    assert.ok(took >= 950 && took < 2500, `ended after ${took} ms (timeout 1000 ms)`);
  });

  it('keeps only the first 1 KB of an answer, NUL replaced, and answers the next attempt normally', async () => {
    const first = await roomy.post(new URL('/big', url), { 'content-type': 'application/json' }, '{}');
    assert.equal(first.statusCode, 200);
    assert.equal(first.body, '\uFFFD' + 'y'.repeat(MAX_RESPONSE_BYTES - 1));
    // Many attempts at once, each with its own deadline; none is cut short by another's.
    const many = await Promise.all(Array.from({ length: 20 }, () => roomy.post(new URL('/big', url), {}, '{}')));
    assert.deepEqual(new Set(many.map((r) => r.statusCode)), new Set([200]));
  });

  it("verifies the receiver's certificate on every new connection (one TLS context serves them all)", async () => {
    // Each attempt below ends with its connection closed, so the next one connects again.
    const closing = { connection: 'close' };
    const untrusting = new DeliveryClient({
      guard: new AddressGuard({ allowedCidrs: ['127.0.0.1/32'], dnsServers: [] }),
      timeoutMs: 1000,
    });
    try {
      for (let i = 0; i < 2; i++) {
        const error = await untrusting.post(new URL('/big', url), closing, '{}').then(
          () => assert.fail('a certificate from an unknown CA must be refused'),
          (err: unknown) => err,
        );
        assert.match(
          describeFailure(error),
          /UNABLE_TO_VERIFY_LEAF_SIGNATURE|unable to verify|self.signed|SELF_SIGNED/i,
        );
      }
    } finally {
      await untrusting.close();
    }
    // A client of its own, with no kept-alive connection from the tests before: each attempt connects.
    const trusting = new DeliveryClient({
      guard: new AddressGuard({ allowedCidrs: ['127.0.0.1/32'], dnsServers: [] }),
      timeoutMs: 30_000,
      ca,
    });
    const connections = new Set<unknown>();
    const onConnection = (socket: unknown) => connections.add(socket);
    server.on('secureConnection', onConnection);
    try {
      for (let i = 0; i < 2; i++)
        assert.equal((await trusting.post(new URL('/big', url), closing, '{}')).statusCode, 200);
    } finally {
      server.off('secureConnection', onConnection);
      await trusting.close();
    }
    assert.equal(connections.size, 2);
  });
});
