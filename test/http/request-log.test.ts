// The request line written without a pino child (the hot path) is byte for byte the line pino
// writes through the child, and a request whose logger was used gets pino's own line.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import pino from 'pino';
import { RequestLogger } from '../../src/http/request-log.ts';

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, callback) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      callback();
    },
  });
  return { lines, logger: pino({ level: 'info' }, stream) };
}
const withoutTime = (line: string) => line.replace(/"time":\d+,/, '');

describe('request log line', () => {
  it('written directly, it has the bytes pino writes through the child (escaping included)', () => {
    for (const url of ['/api/v1/me/', '/api/v1/teams/?q="x"\\y', '/api/v1/\u00e9t\u00e9/\u2028']) {
      const { lines, logger } = capture();
      const direct = new RequestLogger(logger, { request_id: 'req-42' }, {});
      direct.writeRequestLine('GET', url, 200, 0.57);
      logger.child({ request_id: 'req-42' }).info({ method: 'GET', url, status: 200, ms: 0.57 }, 'request');
      assert.equal(lines.length, 2);
      assert.equal(withoutTime(lines[0]), withoutTime(lines[1]));
      assert.deepEqual(JSON.parse(lines[0]).url, url);
    }
  });

  it('the bindings are written as the child writes them, whatever their keys and values', () => {
    const cases: Record<string, unknown>[] = [
      { request_id: 'an "id" with \\ and \u2028' },
      { 'a "label"': 'x', second: 'y' },
      { request_id: 'r', count: 3, nested: { ok: true }, gone: undefined },
    ];
    for (const bindings of cases) {
      const { lines, logger } = capture();
      new RequestLogger(logger, bindings, {}).writeRequestLine('GET', '/api/v1/me/', 200, 1);
      logger.child(bindings).info({ method: 'GET', url: '/api/v1/me/', status: 200, ms: 1 }, 'request');
      assert.equal(withoutTime(lines[0]), withoutTime(lines[1]));
    }
  });

  it('nothing is written below the logger level, and the child is made only when used', () => {
    const { lines, logger } = capture();
    logger.level = 'warn';
    const quiet = new RequestLogger(logger, { request_id: 'r1' }, {});
    quiet.writeRequestLine('GET', '/api/v1/me/', 200, 1);
    assert.deepEqual(lines, []);
    assert.equal(quiet.used, false);
    quiet.setBindings({ extra: 1 });
    quiet.warn({ a: 1 }, 'something');
    assert.equal(quiet.used, true);
    assert.deepEqual(
      { ...JSON.parse(lines[0]), time: 0, pid: 0, hostname: '' },
      { level: 40, time: 0, pid: 0, hostname: '', request_id: 'r1', extra: 1, a: 1, msg: 'something' },
    );
  });
});
