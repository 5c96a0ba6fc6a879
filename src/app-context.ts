// What feature modules receive from buildApp: settings, database, authenticator, scope registry.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyBaseLogger, FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import type { Config } from './config.ts';
import type { Db } from './db/connection.ts';
import type { Authenticator } from './http/auth.ts';
import type { ScopeRegistry } from './http/scopes.ts';

export interface AppContext {
  config: Config;
  db: Db;
  authenticator: Authenticator;
  scopes: ScopeRegistry;
}

export type TypedApp = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;
