// JWT signing keys (EdDSA, Ed25519), kept in the database so every process signs and verifies with
// the same keys. The private JWK is encrypted at rest (util/encryption.ts). The first key is made
// on first use; `svc jwt rotate-key` adds a new current key and schedules the others to retire
// once every access token they signed has expired, so rotation never breaks a live token. The
// public keys of unretired keys are served at /.well-known/jwks.json.
import { randomBytes } from 'node:crypto';
import type { CryptoKey, JWK } from 'jose';
import type { AppContext } from '../app-context.ts';
import { decryptSecret, encryptSecret } from '../util/encryption.ts';
import { isoAfter, nowIso } from '../util/time.ts';
import { jose } from './jose.ts';

export const JWT_ALG = 'EdDSA';
// An unknown kid makes the verifier re-read the table, at most this often (a flood of made-up kids
// must not become a flood of queries).
const RELOAD_INTERVAL_MS = 5_000;
// Known keys are re-read this often too, so a retirement scheduled by another process applies here.
const REFRESH_INTERVAL_MS = 60_000;

interface VerificationKey {
  key: CryptoKey;
  retireAt: number | null;
}

/** What one app has read of jwt_keys (ctx.jwtKeys): verification keys, and the current signing key. */
export class JwtKeyCache {
  keys = new Map<string, VerificationKey>();
  loadedAt = 0;
  loading: Promise<void> | null = null;
  signing: { kid: string; key: CryptoKey; checkedAt: number } | null = null;
}

// A rotation by another process (the CLI) is picked up within this long; the old key stays valid
// for the access-token lifetime plus a minute, so tokens signed meanwhile still verify.
const SIGNING_RECHECK_MS = 30_000;

const privateContext = (kid: string) => `jwt-key:${kid}`;

async function insertKey(ctx: AppContext): Promise<string> {
  const { exportJWK, generateKeyPair } = await jose();
  const { publicKey, privateKey } = await generateKeyPair(JWT_ALG, { crv: 'Ed25519', extractable: true });
  const kid = randomBytes(12).toString('base64url');
  const publicJwk: JWK = { ...(await exportJWK(publicKey)), kid, alg: JWT_ALG, use: 'sig' };
  const privateJwk = await exportJWK(privateKey);
  await ctx.db.kysely
    .insertInto('jwt_keys')
    .values({
      kid,
      alg: JWT_ALG,
      private_jwk_encrypted: encryptSecret(ctx.config.secretKey!, JSON.stringify(privateJwk), privateContext(kid)),
      public_jwk: JSON.stringify(publicJwk),
      created_at: nowIso(),
      retire_at: null,
    })
    .execute();
  return kid;
}

/** The current signing key: the newest key not scheduled to retire; made on first use. */
export async function signingKey(ctx: AppContext): Promise<{ kid: string; key: CryptoKey }> {
  const cache = ctx.jwtKeys;
  if (cache.signing && Date.now() - cache.signing.checkedAt < SIGNING_RECHECK_MS) return cache.signing;
  let row = await currentKeyRow(ctx);
  if (!row) {
    await insertKey(ctx);
    row = await currentKeyRow(ctx);
  }
  if (cache.signing?.kid === row!.kid) {
    cache.signing.checkedAt = Date.now();
    return cache.signing;
  }
  const jwk = JSON.parse(
    decryptSecret(ctx.config.secretKey!, row!.private_jwk_encrypted, privateContext(row!.kid)),
  ) as JWK;
  const { importJWK } = await jose();
  cache.signing = { kid: row!.kid, key: (await importJWK(jwk, JWT_ALG)) as CryptoKey, checkedAt: Date.now() };
  return cache.signing;
}

function currentKeyRow(ctx: AppContext) {
  return ctx.db.kysely
    .selectFrom('jwt_keys')
    .select(['kid', 'private_jwk_encrypted'])
    .where('retire_at', 'is', null)
    .orderBy('created_at', 'desc')
    .orderBy('kid', 'desc')
    .executeTakeFirst();
}

async function reload(ctx: AppContext, cache: JwtKeyCache) {
  const rows = await ctx.db.kysely.selectFrom('jwt_keys').select(['kid', 'public_jwk', 'retire_at']).execute();
  const keys = new Map<string, VerificationKey>();
  const { importJWK } = await jose();
  for (const row of rows) {
    const retireAt = row.retire_at ? Date.parse(row.retire_at) : null;
    keys.set(row.kid, { key: (await importJWK(JSON.parse(row.public_jwk) as JWK, JWT_ALG)) as CryptoKey, retireAt });
  }
  cache.keys = keys;
  cache.loadedAt = Date.now();
}

/** The public key for `kid` while it is unretired; null for an unknown or retired kid. Cached. */
export async function verificationKey(ctx: AppContext, kid: string): Promise<CryptoKey | null> {
  const cache = ctx.jwtKeys;
  let entry = cache.keys.get(kid);
  const age = Date.now() - cache.loadedAt;
  if ((!entry && age > RELOAD_INTERVAL_MS) || age > REFRESH_INTERVAL_MS) {
    cache.loading ??= reload(ctx, cache).finally(() => {
      cache.loading = null;
    });
    await cache.loading;
    entry = cache.keys.get(kid);
  }
  if (!entry || (entry.retireAt !== null && entry.retireAt <= Date.now())) return null;
  return entry.key;
}

/** The JWK Set of every unretired public key (RFC 7517). */
export async function publicJwks(ctx: AppContext): Promise<{ keys: JWK[] }> {
  await signingKey(ctx); // a JWKS is never empty
  const now = nowIso();
  const rows = await ctx.db.kysely
    .selectFrom('jwt_keys')
    .select('public_jwk')
    .where((eb) => eb.or([eb('retire_at', 'is', null), eb('retire_at', '>', now)]))
    .orderBy('created_at', 'desc')
    .execute();
  return { keys: rows.map((row) => JSON.parse(row.public_jwk) as JWK) };
}

/**
 * Makes a new current key. The previous keys keep verifying (and stay in the JWKS) until every
 * access token they signed has expired, then retire. Returns the new kid.
 */
export async function rotateJwtKey(ctx: AppContext): Promise<string> {
  const retireAt = isoAfter(ctx.config.accounts.jwtAccessTtlSeconds + 60);
  await ctx.db.kysely.updateTable('jwt_keys').set({ retire_at: retireAt }).where('retire_at', 'is', null).execute();
  const kid = await insertKey(ctx);
  const cache = ctx.jwtKeys;
  cache.signing = null;
  cache.keys = new Map();
  cache.loadedAt = 0;
  return kid;
}
