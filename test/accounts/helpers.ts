// Shared steps of the accounts tests: reading the mailbox, signing up, TOTP enrolment.
import { TOTP, Secret } from 'otpauth';
import { sendQueuedMail } from '../../src/mail/outbox.ts';
import type { TestApp } from '../support/app.ts';
import { readMailbox } from '../mail/eml.ts';
import { textOfId, type PageClient } from './page-client.ts';

/** Flushes the outbox and returns the messages sent to `to`, oldest first. */
export async function mailTo(t: TestApp, to: string) {
  await sendQueuedMail(t.ctx);
  return readMailbox(t.env.SERVICE_DATA_DIR).filter((mail) => (mail.headers.get('to') ?? '').includes(to));
}

/** The first link under `path` in the newest mail to `to`. */
export async function linkInMail(t: TestApp, to: string, path: string): Promise<string> {
  const mails = await mailTo(t, to);
  const last = mails.at(-1);
  if (!last) throw new Error(`no mail to ${to}`);
  const match = new RegExp(`http://testserver(${path.replace(/\//g, '\\/')}[^\\s]+)`).exec(last.text);
  if (!match) throw new Error(`no ${path} link in: ${last.text}`);
  return match[1];
}

export function codeFor(secret: string, offsetSteps = 0): string {
  return new TOTP({
    secret: Secret.fromBase32(secret.replace(/\s+/g, '')),
    digits: 6,
    period: 30,
    algorithm: 'SHA1',
  }).generate({ timestamp: Date.now() + offsetSteps * 30_000 });
}

/** Enrols TOTP through the MFA page; returns the secret, the code used, and the recovery codes shown once. */
export async function enrolTotp(c: PageClient): Promise<{ secret: string; codes: string[]; enrolCode: string }> {
  await c.get('/accounts/mfa/');
  await c.follow(await c.post('/accounts/mfa/totp/start/'));
  const secret = textOfId(c.lastHtml, 'totp-secret');
  if (!secret) throw new Error('no secret on the MFA page');
  const enrolCode = codeFor(secret);
  const res = await c.post('/accounts/mfa/totp/', { code: enrolCode });
  const page = await c.follow(res);
  const codes = [...page.body.matchAll(/<li>([a-z0-9]{5}-[a-z0-9]{5})<\/li>/g)].map((m) => m[1]);
  return { secret: secret.replace(/\s+/g, ''), codes, enrolCode };
}
