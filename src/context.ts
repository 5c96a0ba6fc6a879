// Builds the AppContext shared by the HTTP server, the worker and the CLI: one per app, holding all
// of its state (app-context.ts).
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import type { AppContext } from './app-context.ts';
import { SessionStore } from './accounts/sessions.ts';
import type { Config } from './config.ts';
import { openDb } from './db/connection.ts';
// The outbox module itself, not the folder's index: the index loads the registry's schemas (TypeBox),
// which a CLI command has no use for.
import { EventOutbox } from './events/outbox.ts';
import { Authenticator } from './http/auth.ts';
import { ClientAddresses } from './http/client-address.ts';
import { ScopeRegistry } from './http/scopes.ts';
import { Throttle } from './http/throttle.ts';
import { newMailState } from './mail/state.ts';
import { LazyOAuthServer } from './oauth/lazy-server.ts';
import { ensureSecretKey } from './secrets.ts';
import { activeTeamIdsOfUser } from './teams/teams.ts';
import { JwtKeyCache } from './tokens/jwt-keys.ts';
import { webhookFanOut } from './webhooks/fan-out.ts';

export function createContext(config: Config): AppContext {
  fs.mkdirSync(config.dataDir, { recursive: true });
  const resolved: Config = { ...config, secretKey: ensureSecretKey(config) };
  const db = openDb(resolved.databaseUrl, { sqliteBusyTimeoutMs: resolved.sqliteBusyTimeoutMs });
  const clientAddresses = new ClientAddresses(resolved.trustedProxies);
  const wake = new EventEmitter().setMaxListeners(0);
  const ctx: AppContext = {
    config: resolved,
    db,
    authenticator: new Authenticator(resolved.baseUrl),
    scopes: new ScopeRegistry(resolved.extraScopes),
    throttle: new Throttle(resolved),
    wake,
    // Webhooks are the one consumer of events; with them off, emitting records nothing.
    events: new EventOutbox({
      consumers: resolved.webhooksEnabled ? [webhookFanOut] : [],
      teamsOfUser: (executor, userId) => activeTeamIdsOfUser(executor, userId),
      wake,
    }),
    clientAddresses,
    sessions: new SessionStore(db, resolved, clientAddresses),
    jwtKeys: new JwtKeyCache(),
    mail: newMailState(),
    // Loaded with the provider's modules on first use; built for this context, whatever it is then.
    // Made by the HTTP app or `svc worker` when they serve metrics; other commands load none of it.
    metrics: null,
    oauth: new LazyOAuthServer(resolved.baseUrl, async () =>
      (await import('./oauth/provider.ts')).createOAuthServer(ctx),
    ),
  };
  return ctx;
}
