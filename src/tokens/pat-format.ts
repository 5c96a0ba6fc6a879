// The raw form of a personal access token: `svc_` + 30 base62 characters of randomness (~178 bits)
// + a 6-character base62 CRC32 of them. The checksum lets a secret scanner (or this service,
// before any lookup) tell a real token from a typo; the same design GitHub uses for its tokens.
import { hash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

export const PAT_PREFIX = 'svc_';
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_LENGTH = 30;
const CHECKSUM_LENGTH = 6;
const PAT_SHAPE = /^svc_[0-9A-Za-z]{36}$/;
/** How much of the raw token is kept for display ("svc_AbCd1234…"). */
export const DISPLAY_PREFIX_LENGTH = 12;

function base62(value: number, width: number): string {
  let out = '';
  for (let i = 0; i < width; i++) {
    out = ALPHABET[value % 62] + out;
    value = Math.floor(value / 62);
  }
  return out;
}

function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // Rejection sampling: 248 = 4 * 62, so bytes below it map uniformly onto the alphabet.
      if (byte < 248 && out.length < length) out += ALPHABET[byte % 62];
    }
  }
  return out;
}

function checksumOf(body: string): string {
  return base62(crc32(body), CHECKSUM_LENGTH);
}

export function generatePat(): string {
  const body = randomBase62(RANDOM_LENGTH);
  return `${PAT_PREFIX}${body}${checksumOf(body)}`;
}

/** True when the token has the PAT shape: prefix, length, alphabet. */
export function hasPatShape(token: string): boolean {
  return PAT_SHAPE.test(token);
}

/** For a token of the PAT shape: true when its checksum matches its random part. */
export function hasValidChecksum(token: string): boolean {
  const body = token.slice(PAT_PREFIX.length, PAT_PREFIX.length + RANDOM_LENGTH);
  return token.slice(-CHECKSUM_LENGTH) === checksumOf(body);
}

/** True when the token has the PAT shape and its checksum matches (no database involved). */
export function isWellFormedPat(token: string): boolean {
  return hasPatShape(token) && hasValidChecksum(token);
}

/** Runs on every PAT request: the one-shot crypto.hash skips the Hash object createHash() builds. */
export function hashPat(token: string): string {
  return hash('sha256', token, 'hex');
}
