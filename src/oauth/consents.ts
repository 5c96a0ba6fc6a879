// Consent: what a user granted a client is an oidc-provider Grant. The library finds the grant of
// the current browser session by itself; this service also remembers the latest grant per
// (user, client) in oauth_consents, so a consent already given is not asked again from another
// browser or after the session ended. A revoked grant (refresh token reuse, …) is gone, and with it
// the remembered consent.
import type { Kysely } from 'kysely';
import type { Grant, KoaContextWithOIDC } from 'oidc-provider';
import type { Database } from '../db/schema.ts';
import { nowIso } from '../util/time.ts';

export async function loadExistingGrant(koa: KoaContextWithOIDC, db: Kysely<Database>): Promise<Grant | undefined> {
  const { oidc } = koa;
  const clientId = oidc.client!.clientId;
  const accountId = oidc.session?.accountId;
  const candidates = [oidc.result?.consent?.grantId, oidc.session?.grantIdFor(clientId)];
  if (accountId && /^\d{1,15}$/.test(accountId)) {
    const remembered = await db
      .selectFrom('oauth_consents')
      .select('grant_id')
      .where('user_id', '=', Number(accountId))
      .where('client_id', '=', clientId)
      .executeTakeFirst();
    candidates.push(remembered?.grant_id);
  }
  for (const grantId of candidates) {
    if (!grantId) continue;
    const grant = await oidc.provider.Grant.find(grantId);
    if (grant && grant.accountId === accountId && grant.clientId === clientId) return grant;
  }
  return undefined;
}

export async function rememberConsent(
  db: Kysely<Database>,
  userId: number,
  clientId: string,
  grantId: string,
): Promise<void> {
  const updatedAt = nowIso();
  await db
    .insertInto('oauth_consents')
    .values({ user_id: userId, client_id: clientId, grant_id: grantId, updated_at: updatedAt })
    .onConflict((oc) => oc.columns(['user_id', 'client_id']).doUpdateSet({ grant_id: grantId, updated_at: updatedAt }))
    .execute();
}

/**
 * Grants `scopes` for the API resource on `grant`: both as OIDC-level scopes and as resource
 * scopes, because the library checks both before it lets an authorization through (granting only
 * one of the two makes it ask for consent again, forever).
 */
export function grantScopes(grant: Grant, resource: string, scopes: readonly string[]) {
  if (scopes.length === 0) return;
  const value = scopes.join(' ');
  grant.addOIDCScope(value);
  grant.addResourceScope(resource, value);
}
