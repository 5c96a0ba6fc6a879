import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DecryptionError, currentKeyId, decryptSecret, encryptSecret } from '../../src/util/encryption.ts';

const KEY = 'k'.repeat(40);
const OLD = 'o'.repeat(40);

describe('encryptSecret / decryptSecret', () => {
  it('round-trips and never repeats a ciphertext', () => {
    const a = encryptSecret(KEY, 'JBSWY3DPEHPK3PXP', 'totp:1');
    const b = encryptSecret(KEY, 'JBSWY3DPEHPK3PXP', 'totp:1');
    assert.notEqual(a, b);
    assert.ok(!a.includes('JBSWY3DPEHPK3PXP'));
    assert.match(a, new RegExp(`^v1\\.${currentKeyId(KEY)}\\.`));
    assert.equal(decryptSecret(KEY, a, 'totp:1'), 'JBSWY3DPEHPK3PXP');
  });
  it('refuses another context, a tampered value and an unknown key', () => {
    const value = encryptSecret(KEY, 'secret', 'totp:1');
    assert.throws(() => decryptSecret(KEY, value, 'totp:2'), DecryptionError);
    const parts = value.split('.');
    parts[3] = Buffer.from('xxxxxx').toString('base64url');
    assert.throws(() => decryptSecret(KEY, parts.join('.'), 'totp:1'), DecryptionError);
    assert.throws(() => decryptSecret(OLD, value, 'totp:1'), /unknown key/);
    assert.throws(() => decryptSecret(KEY, 'plain', ''), DecryptionError);
  });
  it('decrypts with a previous key during rotation', () => {
    const value = encryptSecret(OLD, 'secret');
    assert.equal(decryptSecret([KEY, OLD], value), 'secret');
  });
});
