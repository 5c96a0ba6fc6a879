import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.ts';

const base = { NODE_ENV: 'test', SERVICE_DATA_DIR: '/tmp/svc-mail-config' };

describe('mail settings', () => {
  it('defaults: file transport, localhost sender, intake off, any topic, Node roots', () => {
    const config = loadConfig(base);
    assert.equal(config.emailUrl, null);
    assert.equal(config.emailFrom, 'svc <no-reply@localhost>');
    assert.equal(config.mailproviderWebhookEnabled, false);
    assert.equal(config.mailproviderTopicArn, null);
    assert.equal(config.mailproviderTrustAnchorsFile, null);
  });

  it('accepts SMTP URLs, a sender with a name, a topic ARN', () => {
    const config = loadConfig({
      ...base,
      SERVICE_EMAIL_URL: 'smtps://user:p%2Fss@email-smtp.eu-west-1.amazonaws.com:465',
      SERVICE_EMAIL_FROM: 'Example <no-reply@example.com>',
      SERVICE_MAILPROVIDER_TOPIC_ARN: 'arn:aws:sns:eu-west-1:123456789012:ses-events',
      SERVICE_MAILPROVIDER_WEBHOOK_ENABLED: 'true',
    });
    assert.equal(config.emailUrl, 'smtps://user:p%2Fss@email-smtp.eu-west-1.amazonaws.com:465');
    assert.equal(config.mailproviderWebhookEnabled, true);
  });

  for (const [name, value] of [
    ['SERVICE_EMAIL_URL', 'ses://us-east-1'],
    ['SERVICE_EMAIL_URL', 'http://mail.example.com'],
    ['SERVICE_EMAIL_FROM', 'not an address'],
    ['SERVICE_EMAIL_FROM', 'a@b.c, d@e.f'],
    ['SERVICE_MAILPROVIDER_TOPIC_ARN', 'arn:aws:sqs:us-east-1:123456789012:queue'],
    ['SERVICE_MAILPROVIDER_TRUST_ANCHORS_FILE', '/nonexistent/anchors.pem'],
    ['SERVICE_MAILPROVIDER_WEBHOOK_ENABLED', 'maybe'],
  ]) {
    it(`refuses ${name}=${value} with an error naming it`, () => {
      assert.throws(
        () => loadConfig({ ...base, [name]: value }),
        (error: Error) => error instanceof ConfigError && error.message.includes(name),
      );
    });
  }
});
