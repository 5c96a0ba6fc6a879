// The applications a user has authorized: for each client the user consented to (oauth_consents),
// its name, the scopes its grant holds, when the grant was made and when the application last got a
// token with it; and revoking one, which deletes the grant and every artefact issued under it
// (access tokens, refresh tokens, unused codes) in one transaction, so each stops working on its
// next use. The provider's models all live in oauth_models (adapter.ts), found by grant_id.
import type { Kysely } from 'kysely';
import type { AppContext } from '../app-context.ts';
import type { Database } from '../db/schema.ts';

export interface AuthorizedApplication {
  clientId: string;
  name: string;
  clientUri: string | null;
  scopes: string[];
  /** When the grant was made (ISO 8601 UTC). */
  authorizedAt: string | null;
  /** When the application last obtained a token under the grant: its sign-in or a refresh. */
  lastUsedAt: string | null;
}

interface GrantPayload {
  iat?: number;
  exp?: number;
  openid?: { scope?: string };
  resources?: Record<string, string>;
}

const isoOf = (epochSeconds: number | undefined) =>
  typeof epochSeconds === 'number' ? new Date(epochSeconds * 1000).toISOString() : null;

function grantedScopes(grant: GrantPayload): string[] {
  const words = [grant.openid?.scope ?? '', ...Object.values(grant.resources ?? {})]
    .join(' ')
    .split(' ')
    .filter(Boolean);
  return [...new Set(words)].sort();
}

/** The user's authorized applications whose grant is still alive, by name. */
export async function listAuthorizedApplications(
  ctx: Pick<AppContext, 'db' | 'oauth'>,
  userId: number,
): Promise<AuthorizedApplication[]> {
  const db = ctx.db.kysely;
  const consents = await db
    .selectFrom('oauth_consents')
    .select(['client_id', 'grant_id'])
    .where('user_id', '=', userId)
    .execute();
  if (consents.length === 0) return [];
  const grantIds = consents.map((consent) => consent.grant_id);
  const grants = await db
    .selectFrom('oauth_models')
    .select(['id', 'payload'])
    .where('model', '=', 'Grant')
    .where('id', 'in', grantIds)
    .execute();
  const grantById = new Map(grants.map((row) => [row.id, JSON.parse(row.payload) as GrantPayload]));
  const tokens = await db
    .selectFrom('oauth_models')
    .select(['grant_id', 'payload'])
    .where('grant_id', 'in', grantIds)
    .where('model', 'in', ['AccessToken', 'RefreshToken'])
    .execute();
  const lastIssued = new Map<string, number>();
  for (const token of tokens) {
    const iat = (JSON.parse(token.payload) as { iat?: number }).iat;
    if (token.grant_id && typeof iat === 'number' && iat > (lastIssued.get(token.grant_id) ?? 0))
      lastIssued.set(token.grant_id, iat);
  }
  const provider = (await ctx.oauth.get()).provider;
  const now = Date.now() / 1000;
  const applications: AuthorizedApplication[] = [];
  for (const consent of consents) {
    const grant = grantById.get(consent.grant_id);
    // A grant that expired or was revoked (refresh token reuse) gives the client nothing any more.
    if (!grant || (typeof grant.exp === 'number' && grant.exp <= now)) continue;
    const client = await provider.Client.find(consent.client_id);
    applications.push({
      clientId: consent.client_id,
      name: client?.clientName || consent.client_id,
      clientUri: typeof client?.clientUri === 'string' ? client.clientUri : null,
      scopes: grantedScopes(grant),
      authorizedAt: isoOf(grant.iat),
      lastUsedAt: isoOf(lastIssued.get(consent.grant_id)),
    });
  }
  return applications.sort((a, b) => a.name.localeCompare(b.name) || a.clientId.localeCompare(b.clientId));
}

/**
 * Revokes the user's grant to `clientId`: the grant, every token and code issued under it, and the
 * remembered consent (the next authorization asks again). False when the user has none.
 */
export async function revokeApplication(db: Kysely<Database>, userId: number, clientId: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const consent = await trx
      .selectFrom('oauth_consents')
      .select('grant_id')
      .where('user_id', '=', userId)
      .where('client_id', '=', clientId)
      .executeTakeFirst();
    if (!consent) return false;
    await trx.deleteFrom('oauth_models').where('grant_id', '=', consent.grant_id).execute();
    await trx.deleteFrom('oauth_models').where('model', '=', 'Grant').where('id', '=', consent.grant_id).execute();
    await trx.deleteFrom('oauth_consents').where('user_id', '=', userId).where('client_id', '=', clientId).execute();
    return true;
  });
}
