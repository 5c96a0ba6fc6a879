// Encryption at rest for small secrets (TOTP seeds, webhook signing secrets, JWT private keys):
// AES-256-GCM with a key derived from SECRET_KEY by HKDF-SHA256. The stored form carries a key id
// so the key can rotate: `v1.<kid>.<iv>.<ciphertext>.<tag>` (base64url parts). The kid is the first
// 8 hex characters of a SHA-256 over the derived key, so a value made under another SECRET_KEY is
// recognised as such and refused with a clear error instead of a bare authentication failure.
// Hand-written on node:crypto because it is a dozen lines and a library would add nothing.
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';

const VERSION = 'v1';
const INFO = 'svc encryption at rest v1';

interface DerivedKey {
  kid: string;
  key: Buffer;
}

const derived = new Map<string, DerivedKey>();

function deriveKey(secretKey: string): DerivedKey {
  let entry = derived.get(secretKey);
  if (!entry) {
    const key = Buffer.from(hkdfSync('sha256', secretKey, 'svc', INFO, 32));
    entry = { key, kid: createHash('sha256').update(key).digest('hex').slice(0, 8) };
    derived.set(secretKey, entry);
  }
  return entry;
}

export class DecryptionError extends Error {}

/**
 * Encrypts `plaintext` under SECRET_KEY. `context` (for example "totp:42") is bound as associated
 * data, so a ciphertext copied to another row or purpose does not decrypt.
 */
export function encryptSecret(secretKey: string, plaintext: string, context = ''): string {
  const { key, kid } = deriveKey(secretKey);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(context, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  const tag = cipher.getAuthTag();
  return [VERSION, kid, iv.toString('base64url'), ciphertext.toString('base64url'), tag.toString('base64url')].join(
    '.',
  );
}

/**
 * Decrypts a value made by encryptSecret. `secretKeys` is the current key first, then any
 * previous keys still accepted during a rotation. Throws DecryptionError when no key fits.
 */
export function decryptSecret(secretKeys: string | readonly string[], stored: string, context = ''): string {
  const parts = stored.split('.');
  if (parts.length !== 5 || parts[0] !== VERSION)
    throw new DecryptionError('Not an encrypted value of a known format.');
  const [, kid, iv, ciphertext, tag] = parts;
  const candidates = (typeof secretKeys === 'string' ? [secretKeys] : secretKeys).map(deriveKey);
  const match = candidates.find((candidate) => candidate.kid === kid);
  if (!match) throw new DecryptionError(`Encrypted with an unknown key (kid ${kid}); was SECRET_KEY changed?`);
  try {
    const decipher = createDecipheriv('aes-256-gcm', match.key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    throw new DecryptionError('The encrypted value is corrupt or belongs to another context.');
  }
}

/** The key id values encrypted now carry (for re-encryption jobs after a rotation). */
export function currentKeyId(secretKey: string): string {
  return deriveKey(secretKey).kid;
}
