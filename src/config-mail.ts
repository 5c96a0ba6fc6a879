// The mail capability's settings (docs/mail.md): the transport, the sender, and the mail-provider intake.
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError, raw, type Env } from './config-read.ts';

export function readEmailUrl(env: Env): string | null {
  const value = raw(env, 'SERVICE_EMAIL_URL');
  if (value === undefined) return null;
  // SES is reached through its SMTP endpoint (docs/mail.md): nodemailer's SES transport would pull in the AWS SDK.
  if (!/^smtps?:\/\/[^/\s]+/.test(value)) {
    throw new ConfigError(
      'SERVICE_EMAIL_URL must be smtp://… or smtps://… (for Amazon SES use its SMTP endpoint, see docs/mail.md)',
    );
  }
  return value;
}

export function readEmailFrom(env: Env): string {
  const value = raw(env, 'SERVICE_EMAIL_FROM') ?? 'svc <no-reply@localhost>';
  // One address, optionally with a display name: `Name <a@b.c>` or `a@b.c`.
  if (!/^([^<>@\r\n]*<[^<>\s@]+@[^<>\s@]+>|[^<>\s@]+@[^<>\s@]+)$/.test(value)) {
    throw new ConfigError(
      `SERVICE_EMAIL_FROM must be an address like "Example <no-reply@example.com>", got "${value}"`,
    );
  }
  return value;
}

export function readTopicArn(env: Env): string | null {
  const value = raw(env, 'SERVICE_MAILPROVIDER_TOPIC_ARN');
  if (value === undefined) return null;
  if (!/^arn:aws(-cn|-us-gov)?:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}(\.fifo)?$/.test(value)) {
    throw new ConfigError(
      `SERVICE_MAILPROVIDER_TOPIC_ARN must be an SNS topic ARN (arn:aws:sns:<region>:<account>:<name>), got "${value}"`,
    );
  }
  return value;
}

export function readTrustAnchorsFile(env: Env): string | null {
  const value = raw(env, 'SERVICE_MAILPROVIDER_TRUST_ANCHORS_FILE');
  if (value === undefined) return null;
  const file = path.resolve(value);
  if (!fs.existsSync(file)) throw new ConfigError(`SERVICE_MAILPROVIDER_TRUST_ANCHORS_FILE: no file at ${file}`);
  return file;
}
