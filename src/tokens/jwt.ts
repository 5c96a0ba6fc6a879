// JWT issuance for password-based clients (POST /api/auth/token/) and the bearer resolver that
// accepts the access tokens on the API. Access tokens are EdDSA-signed JWTs (15 minutes) carrying
// iss, sub, aud, iat, exp, jti and scope; refresh tokens are opaque random strings (7 days) stored
// as SHA-256 in families: each refresh spends the presented token and issues the next of the same
// family; presenting a spent one again revokes the whole family (reuse detection).
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { JWTPayload } from 'jose';
import type { AppContext } from '../app-context.ts';
import type { Executor } from '../db/schema.ts';
import type { BearerResolver } from '../http/auth.ts';
import { bearerIdentity, type AuthenticatedIdentity } from '../http/identity.ts';
import { toAuthUser } from '../accounts/users.ts';
import { UnauthenticatedError } from '../util/domain-errors.ts';
import { isoAfter, nowIso } from '../util/time.ts';
import { jose } from './jose.ts';
import { JWT_ALG, signingKey, verificationKey } from './jwt-keys.ts';

export const REFRESH_PREFIX = 'svcr_';
const REFRESH_SHAPE = /^svcr_[A-Za-z0-9_-]{43}$/;
const JWT_SHAPE = /^eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/** The `aud` of access tokens: this service's API. */
export const apiAudience = (ctx: AppContext) => `${ctx.config.baseUrl}/api/`;

const hashRefresh = (token: string) => createHash('sha256').update(token).digest('hex');

export interface TokenPair {
  access: string;
  refresh: string;
  token_type: 'Bearer';
  expires_in: number;
  scope: string;
}

async function signAccess(ctx: AppContext, userId: number, scope: string): Promise<string> {
  const { kid, key } = await signingKey(ctx);
  const { SignJWT } = await jose();
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ scope })
    .setProtectedHeader({ alg: JWT_ALG, kid, typ: 'at+jwt' })
    .setIssuer(ctx.config.baseUrl)
    .setSubject(String(userId))
    .setAudience(apiAudience(ctx))
    .setIssuedAt(now)
    .setExpirationTime(now + ctx.config.accounts.jwtAccessTtlSeconds)
    .setJti(randomUUID())
    .sign(key);
}

/** Stores a new refresh token of `familyId` and returns it (raw: only its SHA-256 is kept). */
async function storeRefreshToken(
  db: Executor,
  ctx: AppContext,
  userId: number,
  scope: string,
  familyId: string,
): Promise<string> {
  const refresh = `${REFRESH_PREFIX}${randomBytes(32).toString('base64url')}`;
  await db
    .insertInto('jwt_refresh_tokens')
    .values({
      token_hash: hashRefresh(refresh),
      family_id: familyId,
      user_id: userId,
      scope,
      created_at: nowIso(),
      expires_at: isoAfter(ctx.config.accounts.jwtRefreshTtlSeconds),
      used_at: null,
      revoked_at: null,
    })
    .execute();
  return refresh;
}

const tokenPair = (ctx: AppContext, access: string, refresh: string, scope: string): TokenPair => ({
  access,
  refresh,
  token_type: 'Bearer',
  expires_in: ctx.config.accounts.jwtAccessTtlSeconds,
  scope,
});

/** A new access token and a refresh token of a new family. */
export async function issueTokenPair(ctx: AppContext, userId: number, scopes: string[]): Promise<TokenPair> {
  const scope = scopes.join(' ');
  const access = await signAccess(ctx, userId, scope);
  return tokenPair(ctx, access, await storeRefreshToken(ctx.db.kysely, ctx, userId, scope, randomUUID()), scope);
}

/**
 * Spends a refresh token and returns the next pair of its family. A token already spent revokes
 * the family; a revoked, expired, unknown token or an inactive user is refused (UnauthenticatedError).
 */
export async function refreshTokenPair(ctx: AppContext, refresh: string): Promise<TokenPair> {
  if (!REFRESH_SHAPE.test(refresh)) throw new UnauthenticatedError('Invalid refresh token.');
  const db = ctx.db.kysely;
  const row = await db
    .selectFrom('jwt_refresh_tokens as r')
    .innerJoin('users as u', 'u.id', 'r.user_id')
    .select([
      'r.token_hash',
      'r.family_id',
      'r.user_id',
      'r.scope',
      'r.expires_at',
      'r.used_at',
      'r.revoked_at',
      'u.is_active',
    ])
    .where('r.token_hash', '=', hashRefresh(refresh))
    .executeTakeFirst();
  if (!row) throw new UnauthenticatedError('Invalid refresh token.');
  if (row.revoked_at !== null) throw new UnauthenticatedError('This refresh token has been revoked.');
  if (row.used_at !== null) {
    await revokeFamily(ctx, row.family_id);
    throw new UnauthenticatedError('This refresh token was already used; every token of its family has been revoked.');
  }
  if (Date.parse(row.expires_at) <= Date.now()) throw new UnauthenticatedError('This refresh token has expired.');
  if (row.is_active !== 1) throw new UnauthenticatedError('Invalid refresh token.');
  // Signed before anything is written: signing may first have to store a signing key, and a
  // failure there (the database busy) must not leave the presented token spent.
  const access = await signAccess(ctx, row.user_id, row.scope);
  // Spending the token and storing its successor are one transaction: a client never holds a spent
  // token without the next one. Compare-and-set: of two concurrent refreshes with the same token,
  // one wins and the other is a reuse.
  const next = await db.transaction().execute(async (trx) => {
    const spent = await trx
      .updateTable('jwt_refresh_tokens')
      .set({ used_at: nowIso() })
      .where('token_hash', '=', row.token_hash)
      .where('used_at', 'is', null)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(spent.numUpdatedRows) === 1
      ? storeRefreshToken(trx, ctx, row.user_id, row.scope, row.family_id)
      : null;
  });
  if (next === null) {
    await revokeFamily(ctx, row.family_id);
    throw new UnauthenticatedError('This refresh token was already used; every token of its family has been revoked.');
  }
  return tokenPair(ctx, access, next, row.scope);
}

async function revokeFamily(ctx: AppContext, familyId: string): Promise<void> {
  await ctx.db.kysely
    .updateTable('jwt_refresh_tokens')
    .set({ revoked_at: nowIso() })
    .where('family_id', '=', familyId)
    .where('revoked_at', 'is', null)
    .execute();
}

/** Revokes the refresh token's whole family (RFC 7009: unknown tokens are not an error). */
export async function revokeRefreshToken(ctx: AppContext, refresh: string): Promise<void> {
  if (!REFRESH_SHAPE.test(refresh)) return;
  const row = await ctx.db.kysely
    .selectFrom('jwt_refresh_tokens')
    .select('family_id')
    .where('token_hash', '=', hashRefresh(refresh))
    .executeTakeFirst();
  if (row) await revokeFamily(ctx, row.family_id);
}

/**
 * Accepts JWT access tokens on the API. Verification is local and cheap: the public key comes from
 * an in-process cache keyed by `kid`; one primary-key query reads the user, so a deactivated user's
 * token stops working on the next request.
 */
export class JwtResolver implements BearerResolver {
  readonly #ctx: AppContext;
  constructor(ctx: AppContext) {
    this.#ctx = ctx;
  }

  matches(token: string): boolean {
    return JWT_SHAPE.test(token);
  }

  async resolve(token: string, _request: unknown, resource: string): Promise<AuthenticatedIdentity | null> {
    const ctx = this.#ctx;
    // A JWT is for the API only (its `aud`): any other protected resource (the MCP endpoint) refuses it.
    if (resource !== ctx.config.baseUrl) return null;
    let payload: JWTPayload;
    try {
      const { decodeProtectedHeader, jwtVerify } = await jose();
      const header = decodeProtectedHeader(token);
      if (header.alg !== JWT_ALG || typeof header.kid !== 'string') return null;
      const key = await verificationKey(ctx, header.kid);
      if (!key) return null;
      ({ payload } = await jwtVerify(token, key, {
        algorithms: [JWT_ALG],
        issuer: ctx.config.baseUrl,
        audience: apiAudience(ctx),
        requiredClaims: ['sub', 'exp', 'iat', 'jti'],
      }));
    } catch {
      return null;
    }
    if (typeof payload.sub !== 'string' || !/^\d{1,15}$/.test(payload.sub) || typeof payload.scope !== 'string')
      return null;
    const user = await ctx.db.kysely
      .selectFrom('users')
      .select(['id', 'email', 'first_name', 'last_name', 'display_name', 'is_staff', 'is_active'])
      .where('id', '=', Number(payload.sub))
      .executeTakeFirst();
    if (!user || user.is_active !== 1) return null;
    return bearerIdentity(
      'jwt',
      toAuthUser(user),
      `jwt:${payload.jti}`,
      new Set(payload.scope.split(' ').filter(Boolean)),
    );
  }
}
