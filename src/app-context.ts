// What feature modules receive from buildApp: settings, database, authenticator, scope registry, and
// every piece of state the app keeps between requests (caches, stores, lazily built servers). None of
// it lives at module level, so two apps built in one process share nothing (test/app-isolation.test.ts).
// State about one request lives on the request (request.identity, request.page), never here.
import type { EventEmitter } from 'node:events';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import type { SessionStore } from './accounts/sessions.ts';
import type { Config } from './config.ts';
import type { Db } from './db/connection.ts';
import type { EventOutbox } from './events/index.ts';
import type { Authenticator } from './http/auth.ts';
import type { ClientAddresses } from './http/client-address.ts';
import type { ScopeRegistry } from './http/scopes.ts';
import type { Throttle } from './http/throttle.ts';
import type { MailState } from './mail/state.ts';
import type { Metrics } from './metrics/metrics.ts';
import type { LazyOAuthServer } from './oauth/lazy-server.ts';
import type { JwtKeyCache } from './tokens/jwt-keys.ts';

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
  /** Where features emit events (events/outbox.ts), in their own transaction. */
  events: EventOutbox;
  /** The client address of a request, per SERVICE_TRUSTED_PROXIES (parsed once). */
  clientAddresses: ClientAddresses;
  /** Browser sessions (accounts/sessions.ts). */
  sessions: SessionStore;
  /** JWT signing and verification keys as last read from jwt_keys (tokens/jwt-keys.ts). */
  jwtKeys: JwtKeyCache;
  /** The mail capability's logger, transport and SNS intake network settings, each made on first use. */
  mail: MailState;
  /** The OAuth authorization server, built on first use (oauth/lazy-server.ts). */
  oauth: LazyOAuthServer;
  /**
   * Prometheus metrics (metrics/metrics.ts): null unless this process serves them (enableMetrics, from
   * buildApp with SERVICE_METRICS_TOKEN or `svc worker` with SERVICE_WORKER_METRICS_PORT).
   */
  metrics: Metrics | null;
}

export type TypedApp = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;
