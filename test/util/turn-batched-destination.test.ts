// The request log's destination: a turn's lines leave in one write at the end of the turn, in
// order; nothing waits for a later turn; lines still queued when the process exits are written.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, it } from 'node:test';
import pino from 'pino';
import { TurnBatchedDestination } from '../../src/util/turn-batched-destination.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** Records each write the destination makes (what reaches the file descriptor, one entry per write). */
function recorder() {
  const writes: string[] = [];
  const sink = { write: (text: string) => writes.push(text) > 0 } as unknown as ReturnType<typeof pino.destination>;
  return { writes, destination: new TurnBatchedDestination(sink) };
}

describe('turn-batched log destination', () => {
  it('writes the lines of one turn in one write, in order, once the turn ends', async () => {
    const { writes, destination } = recorder();
    const logger = pino({ level: 'info', base: null, timestamp: false }, destination);
    logger.info('one');
    logger.info('two');
    logger.warn('three');
    assert.deepEqual(writes, [], 'nothing is written during the turn');
    await nextTurn();
    assert.deepEqual(writes, ['{"level":30,"msg":"one"}\n{"level":30,"msg":"two"}\n{"level":40,"msg":"three"}\n']);
  });

  it('a line logged in a later turn is written at the end of that turn', async () => {
    const { writes, destination } = recorder();
    const logger = pino({ level: 'info', base: null, timestamp: false }, destination);
    logger.info('first');
    await nextTurn();
    logger.info('second');
    await nextTurn();
    await nextTurn();
    assert.deepEqual(writes, ['{"level":30,"msg":"first"}\n', '{"level":30,"msg":"second"}\n']);
  });

  it('flush() writes at once (pino logger.flush)', () => {
    const { writes, destination } = recorder();
    const logger = pino({ level: 'info', base: null, timestamp: false }, destination);
    logger.info('now');
    let flushed = false;
    logger.flush(() => (flushed = true));
    assert.deepEqual([writes, flushed], [['{"level":30,"msg":"now"}\n'], true]);
  });

  it('lines queued when the process exits in the same turn reach stdout', () => {
    const script = `
      import pino from 'pino';
      import { TurnBatchedDestination } from './src/util/turn-batched-destination.ts';
      const logger = pino({ base: null, timestamp: false }, new TurnBatchedDestination());
      logger.info('before exit');
      logger.error('fatal');
      process.exit(3);
    `;
    const child = spawnSync(
      process.execPath,
      ['--disable-warning=ExperimentalWarning', '--input-type=module', '-e', script],
      { cwd: ROOT, encoding: 'utf8' },
    );
    assert.equal(child.status, 3, child.stderr);
    assert.equal(child.stdout, '{"level":30,"msg":"before exit"}\n{"level":50,"msg":"fatal"}\n');
  });
});
