// X-Service-Signature: `t=<unix seconds>,v1=<hex HMAC-SHA256 over "<t>.<raw body>">`, keyed with
// the secret string's UTF-8 bytes. During a rotation's overlap window a second v1 (the old secret)
// follows the new one.
// webhook-signature (Standard Webhooks): `v1,<base64 HMAC-SHA256 over "<id>.<t>.<raw body>">`,
// keyed with the secret's base64-decoded bytes (the secret is base64 of 32 random bytes), so a
// receiver's Standard Webhooks secret is `whsec_` + the secret; space-separated during an overlap.
//
// The HMAC is put together here (RFC 2104: SHA-256 over the outer pad and the SHA-256 of the inner
// pad and the message) from two one-shot `crypto.hash()` calls, rather than with `createHmac`: on
// Node 24 setting up and tearing down a `createHmac` object costs as much as hashing a typical
// payload, so this way a signature costs about half (docs/webhooks.md, "Performance notes").
// test/webhooks/signing.test.ts checks it against `createHmac` (which the receiver-side verify.ts
// keeps using).
import { hash } from 'node:crypto';

/** SHA-256's block size: the length of each key pad. */
const BLOCK = 64;
const MAX_CACHED_KEYS = 10_000;

/** A secret made ready to sign with: its key XORed into the inner and outer pads. */
export interface HmacKey {
  /** key ⊕ 0x36 repeated: what the inner hash starts with. */
  readonly inner: Buffer;
  /** key ⊕ 0x5c repeated, then room for the inner digest: the whole input of the outer hash. */
  readonly outer: Buffer;
}

/** By key encoding: the secret's UTF-8 bytes (X-Service-Signature) or its base64-decoded bytes (Standard Webhooks). */
const keys = { utf8: new Map<string, HmacKey>(), base64: new Map<string, HmacKey>() };

export function hmacKey(secret: string, encoding: keyof typeof keys = 'utf8'): HmacKey {
  const cache = keys[encoding];
  let key = cache.get(secret);
  if (!key) {
    let bytes = Buffer.from(secret, encoding);
    // A key longer than a block is replaced by its digest (RFC 2104, section 2).
    if (bytes.length > BLOCK) bytes = hash('sha256', bytes, 'buffer');
    const inner = Buffer.alloc(BLOCK, 0x36);
    const outer = Buffer.alloc(BLOCK + 32, 0x5c);
    for (let i = 0; i < bytes.length; i++) {
      inner[i] ^= bytes[i];
      outer[i] ^= bytes[i];
    }
    key = { inner, outer };
    if (cache.size >= MAX_CACHED_KEYS) cache.delete(cache.keys().next().value as string);
    cache.set(secret, key);
  }
  return key;
}

/**
 * The inner hash's input is assembled here: inner pad, "<t>.", the body's UTF-8. One buffer for
 * every signature (hashing is synchronous, so no two signatures share it at once); a body too big
 * for it gets a buffer of its own, so one huge payload does not keep memory for good.
 */
const scratch = Buffer.allocUnsafe(16 * 1024);

/** Hex HMAC-SHA256 of "<timestamp>.<body>". */
export function signPayload(key: HmacKey, timestamp: number, body: string): string {
  return hmac(key, `${timestamp}.`, body, 'hex');
}

/** HMAC-SHA256 of `prefix` (ASCII) followed by `body` (UTF-8). */
function hmac(key: HmacKey, prefix: string, body: string, encoding: 'hex' | 'base64'): string {
  // UTF-8 takes at most 3 bytes per UTF-16 code unit (a surrogate pair's 4 bytes are 2 units).
  const most = BLOCK + prefix.length + body.length * 3;
  const input = most <= scratch.length ? scratch : Buffer.allocUnsafe(most);
  key.inner.copy(input, 0);
  let end = BLOCK + input.write(prefix, BLOCK, 'latin1');
  end += input.write(body, end, 'utf8');
  // The inner digest as a one-byte-per-character string, written straight after the outer pad (a
  // Buffer digest is slower). The outer buffer is the key's own; again synchronous.
  key.outer.write(hash('sha256', input.subarray(0, end), 'binary'), BLOCK, 'latin1');
  return hash('sha256', key.outer, encoding);
}

/** The header value for one attempt: the current secret first, then any still-valid old one. */
export function signatureHeader(keysInOrder: readonly HmacKey[], timestamp: number, body: string): string {
  let header = `t=${timestamp}`;
  for (const key of keysInOrder) header += `,v1=${signPayload(key, timestamp, body)}`;
  return header;
}

/** The webhook-signature value: `v1,<base64>` per key (keys from hmacKey(secret, 'base64')), space-separated. */
export function standardSignatureHeader(
  keysInOrder: readonly HmacKey[],
  id: string,
  timestamp: number,
  body: string,
): string {
  let header = '';
  for (const key of keysInOrder) header += `${header ? ' ' : ''}v1,${hmac(key, `${id}.${timestamp}.`, body, 'base64')}`;
  return header;
}
