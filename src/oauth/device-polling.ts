// RFC 8628 §3.5 polling discipline, which oidc-provider leaves to the deployment: a device client
// polls the token endpoint at most once per `interval` (5 s, announced in the device authorization
// response); a poll that comes sooner gets `slow_down` and the interval grows by 5 s for that device
// code from then on. State is a row per device code (digest of it), updated by compare-and-set so
// concurrent polls on several processes cannot both pass.
import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import { DEVICE_POLL_INTERVAL } from './constants.ts';

export type PollVerdict = 'unknown' | 'ok' | 'slow_down';

export async function checkDevicePoll(
  db: Kysely<Database>,
  deviceCode: string,
  now = Date.now(),
): Promise<PollVerdict> {
  if (deviceCode.length === 0 || deviceCode.length > 200) return 'unknown';
  const code = await db
    .selectFrom('oauth_models')
    .select('expires_at')
    .where('model', '=', 'DeviceCode')
    .where('id', '=', deviceCode)
    .executeTakeFirst();
  if (!code) return 'unknown';
  const id = createHash('sha256').update(deviceCode).digest('base64url');
  const nowIso = new Date(now).toISOString();
  const state = await db
    .selectFrom('oauth_device_polls')
    .select(['interval_seconds', 'last_polled_at'])
    .where('device_code_id', '=', id)
    .executeTakeFirst();
  if (!state) {
    await db
      .insertInto('oauth_device_polls')
      .values({
        device_code_id: id,
        interval_seconds: DEVICE_POLL_INTERVAL,
        last_polled_at: nowIso,
        expires_at: code.expires_at ?? nowIso,
      })
      .onConflict((oc) => oc.column('device_code_id').doNothing())
      .execute();
    return 'ok';
  }
  const tooSoon = now - Date.parse(state.last_polled_at) < state.interval_seconds * 1000;
  const result = await db
    .updateTable('oauth_device_polls')
    .set({ last_polled_at: nowIso, interval_seconds: tooSoon ? state.interval_seconds + 5 : state.interval_seconds })
    .where('device_code_id', '=', id)
    .where('last_polled_at', '=', state.last_polled_at)
    .executeTakeFirst();
  // Lost the compare-and-set: another poll of this code landed at the same moment.
  if (Number(result.numUpdatedRows) === 0) return 'slow_down';
  return tooSoon ? 'slow_down' : 'ok';
}
