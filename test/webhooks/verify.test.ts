import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { beforeEach, describe, it } from 'node:test';
import { verifyWebhookSignature } from '../../src/webhooks/verify.ts';

const secret = 'c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlYw==';
const body = '{"id":"evt_1","type":"team.member.added"}';
const sign = (key: string, t: number, raw = body) => createHmac('sha256', key).update(`${t}.${raw}`).digest('hex');

describe('verifyWebhookSignature', () => {
  // Read when each test runs, not when the file loads: a ±300 s window must be measured from the check.
  let now = 0;
  beforeEach(() => {
    now = Math.floor(Date.now() / 1000);
  });
  it('accepts a fresh signature over the raw body, as string or bytes', () => {
    const header = `t=${now},v1=${sign(secret, now)}`;
    assert.equal(verifyWebhookSignature(secret, header, body), true);
    assert.equal(verifyWebhookSignature(secret, header, Buffer.from(body)), true);
  });
  it('accepts when any v1 matches (rotation overlap), in either position', () => {
    assert.equal(
      verifyWebhookSignature(secret, `t=${now},v1=${sign('other', now)},v1=${sign(secret, now)}`, body),
      true,
    );
    assert.equal(
      verifyWebhookSignature('other', `t=${now},v1=${sign('other', now)},v1=${sign(secret, now)}`, body),
      true,
    );
  });
  it('refuses a changed body, another secret, a stale or future timestamp, and malformed headers', () => {
    assert.equal(verifyWebhookSignature(secret, `t=${now},v1=${sign(secret, now)}`, body + ' '), false);
    assert.equal(verifyWebhookSignature('nope', `t=${now},v1=${sign(secret, now)}`, body), false);
    assert.equal(verifyWebhookSignature(secret, `t=${now - 301},v1=${sign(secret, now - 301)}`, body), false);
    assert.equal(verifyWebhookSignature(secret, `t=${now - 299},v1=${sign(secret, now - 299)}`, body), true);
    assert.equal(verifyWebhookSignature(secret, `t=${now + 400},v1=${sign(secret, now + 400)}`, body), false);
    assert.equal(
      verifyWebhookSignature(secret, `t=${now - 50},v1=${sign(secret, now - 50)}`, body, { toleranceSeconds: 10 }),
      false,
    );
    for (const header of [
      undefined,
      '',
      'garbage',
      `v1=${sign(secret, now)}`,
      `t=${now}`,
      `t=abc,v1=${sign(secret, now)}`,
      `t=${now},v1=zz`,
      `t=${now},v0=${sign(secret, now)}`,
    ]) {
      assert.equal(verifyWebhookSignature(secret, header, body), false, String(header));
    }
  });
});
