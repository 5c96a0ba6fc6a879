// What feature modules receive from buildApp: settings, database, authenticator, scope registry.
import type { EventEmitter } from 'node:events';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyBaseLogger, FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import type { Config } from './config.ts';
import type { Db } from './db/connection.ts';
import type { Authenticator } from './http/auth.ts';
import type { ScopeRegistry } from './http/scopes.ts';
import type { Throttle } from './http/throttle.ts';

export interface AppContext {
  config: Config;
  db: Db;
  authenticator: Authenticator;
  scopes: ScopeRegistry;
  /** Request throttling (in-process, or Redis when REDIS_URL is set); the app closes it on close. */
  throttle: Throttle;
  /**
   * In-process wake-ups: writers emit an event name (e.g. 'webhooks', 'mail') after committing
   * outbox rows so a worker in the same process starts at once instead of waiting for its poll.
   */
  wake: EventEmitter;
}

export type TypedApp = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;
