// The sender's HMAC (signing.ts builds it from two one-shot hashes over key pads) must equal
// Node's createHmac byte for byte, for every kind of secret and body a subscription can have.
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { hmacKey, signatureHeader, signPayload } from '../../src/webhooks/signing.ts';
import { verifyWebhookSignature } from '../../src/webhooks/verify.ts';

const reference = (secret: string, t: number, body: string) =>
  createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${t}.${body}`).digest('hex');

const secrets = {
  'a generated secret': 'whsec_' + randomBytes(24).toString('base64url'),
  'an empty key': '',
  'one byte': 'k',
  'exactly one block (64 bytes)': 'b'.repeat(64),
  'one byte over a block (hashed first)': 'c'.repeat(65),
  'a long key': 'd'.repeat(1000),
  'multi-byte UTF-8 (64 characters, 128 bytes)': 'é'.repeat(64),
};

const bodies = {
  empty: '',
  'a JSON envelope': JSON.stringify({
    id: 'evt_1',
    type: 'team.member.added',
    data: { user_id: 42, email: 'a@example.com' },
  }),
  'accents, CJK and emoji': '{"name":"Zoë 東京 🚀","note":"€"}',
  'a lone surrogate (sent as U+FFFD)': '{"x":"\ud800"}',
  'larger than the shared buffer (100 KB of 3-byte characters)': '{"x":"' + '€'.repeat(35_000) + '"}',
};

describe('webhook signing', () => {
  const t = 1_767_225_600;
  for (const [secretName, secret] of Object.entries(secrets)) {
    it(`equals createHmac with ${secretName}, for every body`, () => {
      const key = hmacKey(secret);
      for (const [bodyName, body] of Object.entries(bodies))
        assert.equal(signPayload(key, t, body), reference(secret, t, body), bodyName);
    });
  }

  it('a big body then a small one: nothing of the first is left in the second signature', () => {
    const key = hmacKey('whsec_reuse');
    // Big, yet within the shared 16 KB buffer (at most 3 bytes a character: 15 KB), so the small
    // bodies after it reuse the very bytes it filled.
    const big = 'x'.repeat(5_000);
    assert.equal(signPayload(key, t, big), reference('whsec_reuse', t, big));
    for (const body of ['{"a":1}', 'é', '']) assert.equal(signPayload(key, t, body), reference('whsec_reuse', t, body));
  });

  it('random secrets, bodies and timestamps agree with createHmac', () => {
    for (let i = 0; i < 500; i++) {
      const secret = randomBytes(i % 130).toString(i % 2 ? 'base64' : 'latin1');
      const body = randomBytes(i * 7).toString('utf8');
      const at = 1_700_000_000 + i * 997;
      assert.equal(signPayload(hmacKey(secret), at, body), reference(secret, at, body), `case ${i}`);
    }
  });

  it('the header carries t and one v1 per key, in order, and verifies with either secret', () => {
    const body = bodies['a JSON envelope'];
    const header = signatureHeader([hmacKey('new-secret'), hmacKey('old-secret')], t, body);
    assert.equal(header, `t=${t},v1=${reference('new-secret', t, body)},v1=${reference('old-secret', t, body)}`);
    assert.equal(verifyWebhookSignature('new-secret', header, body, { now: t }), true);
    assert.equal(verifyWebhookSignature('old-secret', header, body, { now: t }), true);
    assert.equal(verifyWebhookSignature('other-secret', header, body, { now: t }), false);
  });
});
