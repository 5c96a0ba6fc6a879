// The raw PAT form: `svc_` + base62 randomness (≥160 bits) + a checksum that tells a real token
// from a typo without a database lookup; only its SHA-256 hex is ever stored.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import {
  DISPLAY_PREFIX_LENGTH,
  PAT_PREFIX,
  generatePat,
  hashPat,
  isWellFormedPat,
} from '../../src/tokens/pat-format.ts';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

describe('PAT format', () => {
  it('is svc_ followed by base62 characters carrying at least 160 bits of randomness', () => {
    const token = generatePat();
    assert.equal(PAT_PREFIX, 'svc_');
    assert.match(token, /^svc_[0-9A-Za-z]+$/);
    // 6 characters of checksum; the rest is random.
    const randomChars = token.length - PAT_PREFIX.length - 6;
    assert.ok(
      randomChars * Math.log2(62) >= 160,
      `${randomChars} base62 characters = ${(randomChars * Math.log2(62)).toFixed(1)} bits`,
    );
  });

  it('generated tokens are distinct and pass their own checksum', () => {
    const tokens = new Set(Array.from({ length: 2000 }, generatePat));
    assert.equal(tokens.size, 2000);
    for (const token of tokens) assert.ok(isWellFormedPat(token), token);
  });

  it('uses the whole alphabet roughly evenly (no modulo bias in the random part)', () => {
    const counts = new Map<string, number>();
    const samples = 3000;
    for (let i = 0; i < samples; i++)
      for (const c of generatePat().slice(4, 34)) counts.set(c, (counts.get(c) ?? 0) + 1);
    assert.equal(counts.size, 62);
    const expected = (samples * 30) / 62;
    for (const [c, n] of counts)
      assert.ok(Math.abs(n - expected) < expected * 0.15, `${c}: ${n} vs ${expected.toFixed(0)}`);
  });

  it('every single-character change is caught by the checksum', () => {
    const token = generatePat();
    let caught = 0;
    let tried = 0;
    for (let i = PAT_PREFIX.length; i < token.length; i++) {
      for (const c of ALPHABET) {
        if (c === token[i]) continue;
        tried++;
        if (!isWellFormedPat(token.slice(0, i) + c + token.slice(i + 1))) caught++;
      }
    }
    assert.equal(caught, tried);
  });

  it('refuses other shapes', () => {
    const token = generatePat();
    for (const bad of [
      '',
      'svc_',
      token.slice(0, -1),
      token + 'A',
      token.replace('svc_', 'SVC_'),
      token.replace('svc_', 'ghp_'),
      token.slice(0, 10) + '-' + token.slice(11),
      ` ${token}`,
      `${token}\n`,
    ]) {
      assert.equal(isWellFormedPat(bad), false, JSON.stringify(bad));
    }
  });

  it('is stored as the SHA-256 hex of the whole raw token; the display prefix does not reveal it', () => {
    const token = generatePat();
    assert.equal(hashPat(token), createHash('sha256').update(token).digest('hex'));
    assert.match(hashPat(token), /^[0-9a-f]{64}$/);
    assert.ok(DISPLAY_PREFIX_LENGTH <= 12, 'at most 8 random characters (~48 bits) shown');
  });
});
