// Starts the real app on a fresh database. Most tests use `inject` (Fastify's in-process HTTP);
// `listen()` gives a real socket for tests that need one.
import { randomBytes } from 'node:crypto';
import type { AppContext, TypedApp } from '../../src/app-context.ts';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createContext } from '../../src/context.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { cliActor } from '../../src/audit/actor.ts';
import { createPat } from '../../src/tokens/pats.ts';
import { createTeam, addMember, type Role } from '../../src/teams/teams.ts';
import { freshDatabase, type TestDatabase } from './database.ts';
import { TEST_PASSWORD, user, type UserOptions } from './users.ts';

export const TEST_SECRET_KEY = 'test-secret-key-0123456789abcdefghijklmnop';
export { TEST_PASSWORD };
/** Who the fixtures' team changes are recorded as in the audit log: the operator CLI. */
export const FIXTURE_ACTOR = cliActor('test fixture');

export interface TestApp {
  app: TypedApp;
  ctx: AppContext;
  env: Record<string, string>;
  inject: TypedApp['inject'];
  /** Listens on 127.0.0.1 on a free port and returns the base URL. */
  listen(): Promise<string>;
  /** A user with TEST_PASSWORD, written straight into the table (test/support/users.ts). */
  user(options?: Partial<UserOptions>): Promise<{ id: number; email: string }>;
  token(userId: number, scopes?: string[], expiresAt?: string | null): Promise<string>;
  team(ownerId: number, name?: string): Promise<{ id: string; slug: string }>;
  member(teamId: string, userId: number, role: Role): Promise<void>;
  close(): Promise<void>;
}

let counter = 0;

/** The environment a test app (or a CLI subprocess on the same database) runs with. */
export function testEnv(database: TestDatabase, extra: Record<string, string> = {}): Record<string, string> {
  return {
    NODE_ENV: 'test',
    DATABASE_URL: database.url,
    SERVICE_DATA_DIR: database.dataDir,
    SECRET_KEY: TEST_SECRET_KEY,
    BASE_URL: 'http://testserver',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    // With TEST_REDIS_URL the throttle counts in Redis, under a key prefix of this app's own.
    ...(process.env.TEST_REDIS_URL
      ? { REDIS_URL: process.env.TEST_REDIS_URL, REDIS_KEY_PREFIX: `test:${randomBytes(6).toString('hex')}:` }
      : {}),
    ...extra,
  };
}

export interface StartOptions {
  /** Runs after buildApp and before app.ready(): register test-only routes or hooks here. */
  beforeReady?: (app: TypedApp, ctx: AppContext) => void | Promise<void>;
}

export async function startApp(extraEnv: Record<string, string> = {}, options: StartOptions = {}): Promise<TestApp> {
  const database = await freshDatabase();
  const env = testEnv(database, extraEnv);
  const ctx = createContext(loadConfig(env));
  await migrateToLatest(ctx.db);
  const app = await buildApp(ctx);
  await options.beforeReady?.(app, ctx);
  await app.ready();
  if (env.REDIS_URL !== undefined && env.REDIS_URL === process.env.TEST_REDIS_URL) await onRedis(ctx);
  const db = ctx.db.kysely;
  return {
    app,
    ctx,
    env,
    inject: app.inject.bind(app) as TypedApp['inject'],
    async listen() {
      await app.listen({ port: 0, host: '127.0.0.1' });
      const address = app.server.address();
      return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    },
    user(options = {}) {
      return user(db, options);
    },
    async token(userId, scopes = [], expiresAt = null) {
      return (await createPat(db, { userId, name: 'test', scopes, expiresAt })).token;
    },
    async team(ownerId, name = `Team ${++counter}`) {
      const team = await createTeam(db, { name, ownerId }, FIXTURE_ACTOR);
      return { id: team.id, slug: team.slug };
    },
    async member(teamId, userId, role) {
      await addMember(db, teamId, userId, role, FIXTURE_ACTOR);
    },
    async close() {
      await app.close();
      await ctx.db.close();
      await database.drop();
    },
  };
}

/**
 * Waits until the throttle counts in Redis. On a loaded machine the start can give up on Redis
 * (the connect timeout) and count in the per-process fallback until the client reconnects; a test
 * that counts a few requests across that switch would see the count start again.
 */
async function onRedis(ctx: AppContext): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (ctx.throttle.usingFallback) {
    if (Date.now() > deadline) throw new Error('the test app could not reach Redis at TEST_REDIS_URL in 20 s');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
