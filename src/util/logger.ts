// The process's pino logger for HTTP requests: JSON lines on stdout, written asynchronously (pino's
// default destination; lines still queued are written synchronously when the process exits). Made
// here rather than by Fastify so that request-log.ts writes its request lines through this very pino
// (its symbols) and destination. Buffering lines into blocks was measured and dropped: under load
// the asynchronous writes already coalesce, and no difference showed, to /dev/null or to a pipe.
import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import type { Config } from '../config.ts';

export function requestLogger(config: Pick<Config, 'logLevel'>): FastifyBaseLogger {
  return pino({ level: config.logLevel }, pino.destination({ dest: 1, sync: false }));
}
