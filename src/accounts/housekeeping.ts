// The worker task that deletes dead account rows: expired sessions, used or expired e-mail keys,
// failure records older than the throttle window, and refresh tokens past their expiry. Requests
// already ignore all of them; this only keeps the tables small. Each DELETE is idempotent, so any
// number of workers may run it at once.
import type { AppContext } from '../app-context.ts';
import { purgeOlderThan } from '../db/batched-delete.ts';
import { nowIso } from '../util/time.ts';
import { periodic } from '../worker/periodic.ts';
import { WINDOW_SECONDS } from './auth-throttle.ts';

export const ACCOUNTS_PURGE_INTERVAL_MS = 10 * 60_000;

export async function purgeAccountRows(ctx: Pick<AppContext, 'db'>): Promise<void> {
  const db = ctx.db.kysely;
  const now = nowIso();
  // Tables that grow with the users (one row per session, per refresh, per failed sign-in) go in
  // batches along their time index (db/batched-delete.ts); e-mail keys are few and short-lived.
  await purgeOlderThan(db, 'sessions', 'expires_at', now);
  await db
    .deleteFrom('account_keys')
    .where((eb) => eb.or([eb('expires_at', '<', now), eb('used_at', 'is not', null)]))
    .execute();
  await purgeOlderThan(db, 'auth_failures', 'created_at', new Date(Date.now() - WINDOW_SECONDS * 1000).toISOString());
  await purgeOlderThan(db, 'jwt_refresh_tokens', 'expires_at', now, { key: ['token_hash'] });
}

export const accountsPurgeTask = periodic({
  name: 'accounts-purge',
  intervalMs: ACCOUNTS_PURGE_INTERVAL_MS,
  round: purgeAccountRows,
});
