// The authorization server's keys, derived from SECRET_KEY (HKDF-SHA256, one label per purpose) so
// every process of a deployment agrees on them without a key table, and oidc-provider's built-in
// development keys are never used. Rotating SECRET_KEY rotates them (docs/oauth.md).
//  - signing: one Ed25519 key (JWKS at /o/jwks/). Access tokens are opaque, so the key only signs
//    what the library may sign itself; it is published for completeness.
//  - cookies: the keys oidc-provider signs its session and interaction cookies with.
import { createHash, createPrivateKey, hkdfSync } from 'node:crypto';
import type { JWK } from 'oidc-provider';

function derive(secretKey: string, label: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secretKey, 'svc oauth', label, 32));
}

// PKCS#8 DER prefix of an Ed25519 private key; the 32-byte seed follows it (RFC 8410).
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

export function signingJwks(secretKey: string): { keys: JWK[] } {
  const seed = derive(secretKey, 'signing key ed25519 v1');
  const key = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
  const jwk = key.export({ format: 'jwk' }) as JWK;
  const kid = createHash('sha256').update(String(jwk.x)).digest('base64url').slice(0, 16);
  return { keys: [{ ...jwk, kid, alg: 'EdDSA', use: 'sig' }] };
}

export function cookieKeys(secretKey: string): string[] {
  return [derive(secretKey, 'cookie keys v1').toString('base64url')];
}

/** Client secrets are kept as SHA-256 digests (docs/oauth.md); the raw secret is shown once. */
export function hashClientSecret(secret: string): string {
  return `sha256:${createHash('sha256').update(secret).digest('base64url')}`;
}
