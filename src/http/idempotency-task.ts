// The worker task that deletes expired Idempotency-Key records (SERVICE_IDEMPOTENCY_TTL_HOURS).
// Expired rows are already ignored by requests (a stale key is taken over as fresh); this only
// keeps the table small. Several workers may run it at once: each DELETE is idempotent.
import { periodic } from '../worker/periodic.ts';
import { purgeExpiredIdempotencyKeys } from './idempotency.ts';

export const IDEMPOTENCY_PURGE_INTERVAL_MS = 10 * 60_000;

export const idempotencyPurgeTask = periodic({
  name: 'idempotency-purge',
  intervalMs: IDEMPOTENCY_PURGE_INTERVAL_MS,
  round: (ctx) => purgeExpiredIdempotencyKeys(ctx.db.kysely),
});
