// The process's pino logger for HTTP requests: JSON lines on stdout. With LOG_FLUSH_INTERVAL_MS
// (default 200 in production) the lines are gathered in memory and written in blocks of 4 KiB,
// or by sonic-boom's periodic flush at that interval at the latest, rather than one write per
// line. Buffered lines are written synchronously when the process exits (pino registers that for
// asynchronous destinations); only a SIGKILL can lose them, at most one interval's worth.
import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import type { Config } from '../config.ts';

const BUFFER_BYTES = 4 * 1024;

export function requestLogger(config: Pick<Config, 'logLevel' | 'logFlushIntervalMs'>): FastifyBaseLogger {
  const interval = config.logLevel === 'silent' ? 0 : config.logFlushIntervalMs;
  const destination = pino.destination({ dest: 1, sync: false, minLength: interval > 0 ? BUFFER_BYTES : 0, periodicFlush: interval });
  return pino({ level: config.logLevel }, destination);
}
