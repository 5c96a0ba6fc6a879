// A real HTTPS webhook receiver on 127.0.0.1 (or 127.0.0.2), with a configurable answer per request.
// Every request it receives must be an event valid against its type's published schema (the event
// catalog): one that is not fails the test waiting for it, and the test file when it closes the receiver.
import https from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EventValidator } from './event-schemas.ts';
import { testPki } from './tls.ts';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
  path: string;
  /** When the answer was handed to the connection; unset while it is held. */
  answeredAt?: number;
  /** When the connection closed before an answer was sent (the sender hung up, or `destroy`). */
  hungUpAt?: number;
}

export interface Answer {
  status?: number;
  body?: string;
  headers?: Record<string, string>;
  /** Hold the answer this long (timeouts). */
  delayMs?: number;
  /** Hold the answer until this settles (then `delayMs`, if any): a test decides when requests in flight end. */
  hold?: Promise<unknown>;
  /** Drop the connection without answering. */
  destroy?: boolean;
}

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** Why each request that was not a valid event of a published type is not one. */
  invalid: string[];
  /** Decides the answer to each request (default 200 "ok"). */
  answer: (request: Received, index: number) => Answer;
  waitFor(count: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startReceiver(host = '127.0.0.1', path = '/hook'): Promise<Receiver> {
  const { certPem, keyPem } = await testPki();
  const received: Received[] = [];
  const invalid: string[] = [];
  const events = new EventValidator();
  const waiters: { count: number; resolve: () => void }[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const server = https.createServer({ cert: certPem, key: keyPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const entry: Received = {
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
        path: req.url ?? '',
      };
      res.on('finish', () => (entry.answeredAt = Date.now()));
      res.on('close', () => {
        if (!res.writableFinished) entry.hungUpAt = Date.now();
      });
      const problem = events.problem(entry.body);
      if (problem) invalid.push(problem);
      const index = received.push(entry) - 1;
      for (const waiter of waiters.filter((w) => problem || received.length >= w.count)) waiter.resolve();
      const answer = receiver.answer(entry, index);
      const send = () => {
        if (entry.hungUpAt !== undefined) return;
        if (answer.destroy) return req.socket.destroy();
        res.writeHead(answer.status ?? 200, { 'content-type': 'text/plain', ...answer.headers });
        res.end(answer.body ?? 'ok');
      };
      const delayed = () => {
        if (!answer.delayMs) return send();
        const timer = setTimeout(send, answer.delayMs);
        timers.add(timer);
        res.on('close', () => clearTimeout(timer));
      };
      if (answer.hold) answer.hold.then(delayed, delayed);
      else delayed();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as AddressInfo).port;
  const receiver: Receiver = {
    url: `https://${host}:${port}${path}`,
    port,
    received,
    invalid,
    answer: () => ({}),
    waitFor(count, timeoutMs = 20_000) {
      if (invalid.length > 0) return Promise.reject(invalidEvents(invalid));
      if (received.length >= count) return Promise.resolve(received);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`receiver got ${received.length} of ${count} requests in ${timeoutMs} ms`)),
          timeoutMs,
        );
        waiters.push({
          count,
          resolve: () => {
            clearTimeout(timer);
            if (invalid.length > 0) reject(invalidEvents(invalid));
            else resolve(received);
          },
        });
      });
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        for (const timer of timers) clearTimeout(timer);
        server.closeAllConnections();
        server.close(() => (invalid.length > 0 ? reject(invalidEvents(invalid)) : resolve()));
      }),
  };
  return receiver;
}

const invalidEvents = (problems: string[]) =>
  new Error(
    `the receiver got ${problems.length} request(s) that are not a valid event of the published catalog:\n${problems.join('\n')}`,
  );
