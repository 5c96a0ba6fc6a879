// Builds the AppContext shared by the HTTP server, the worker and the CLI.
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import type { AppContext } from './app-context.ts';
import type { Config } from './config.ts';
import { openDb } from './db/connection.ts';
import { Authenticator } from './http/auth.ts';
import { ScopeRegistry } from './http/scopes.ts';
import { Throttle } from './http/throttle.ts';
import { ensureSecretKey } from './secrets.ts';

export function createContext(config: Config): AppContext {
  fs.mkdirSync(config.dataDir, { recursive: true });
  const resolved: Config = { ...config, secretKey: ensureSecretKey(config) };
  return {
    config: resolved,
    db: openDb(resolved.databaseUrl, { sqliteBusyTimeoutMs: resolved.sqliteBusyTimeoutMs }),
    authenticator: new Authenticator(resolved.baseUrl),
    scopes: new ScopeRegistry(resolved.extraScopes),
    throttle: new Throttle(resolved),
    wake: new EventEmitter().setMaxListeners(0),
  };
}
