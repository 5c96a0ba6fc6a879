// The worker task that deletes expired OAuth rows (tokens, codes, sessions, interactions, device
// polling state, old wrong-code records) a day after they expire. Expired rows are already refused
// by the library; this only keeps the tables small. Several workers may run it at once.
import { periodic } from '../worker/periodic.ts';
import { deleteExpiredOAuthRows } from './adapter.ts';

export const OAUTH_PURGE_INTERVAL_MS = 10 * 60_000;

export const oauthPurgeTask = periodic({
  name: 'oauth-purge',
  intervalMs: OAUTH_PURGE_INTERVAL_MS,
  round: (ctx) => deleteExpiredOAuthRows(ctx.db.kysely),
});
