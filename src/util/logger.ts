// The process's pino logger for HTTP requests: JSON lines on stdout, the lines of each event-loop
// turn written together at the turn's end (turn-batched-destination.ts). Made here rather than by
// Fastify so that request-log.ts writes its request lines through this very pino (its symbols) and
// destination.
import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import type { Config } from '../config.ts';
import { TurnBatchedDestination } from './turn-batched-destination.ts';

export function requestLogger(config: Pick<Config, 'logLevel'>): FastifyBaseLogger {
  return pino({ level: config.logLevel }, new TurnBatchedDestination());
}
