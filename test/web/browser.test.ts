// The whole journey of a person in headless Chromium (Debian's chromium, driven by playwright-core)
// against the real app listening on a real port: sign up → open the verification link from the
// written .eml → log in → enrol TOTP (code computed from the secret shown on the page) → log out and
// in again with TOTP → re-authenticate → create a token → call /api/v1/me/ with it over real HTTP →
// revoke it → the next call is 401. Each page is saved to test-output/screenshots/.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { sendQueuedMail } from '../../src/mail/outbox.ts';
import { codeFor } from '../accounts/helpers.ts';
import { startApp, type TestApp } from '../support/app.ts';
import { readMailbox } from '../mail/eml.ts';
import { freePort } from '../support/net.ts';
import { NO_CHROMIUM, launchChromium } from '../support/browser.ts';

const SHOTS = path.resolve(fileURLToPath(new URL('../../test-output/screenshots/', import.meta.url)));
const EMAIL = 'grace.hopper@example.com';
const PASSWORD = 'compiler pioneer 1952 cobol';

describe('browser journey: sign-up to a revoked token', { skip: NO_CHROMIUM }, () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let page: Page;
  let shot = 0;

  const screenshot = async (name: string) => {
    await page.screenshot({ path: path.join(SHOTS, `${String(++shot).padStart(2, '0')}-${name}.png`), fullPage: true });
  };

  before(async () => {
    fs.mkdirSync(SHOTS, { recursive: true });
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    t = await startApp({ BASE_URL: base, PORT: String(port) });
    await t.app.listen({ port, host: '127.0.0.1' });
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1000, height: 800 } })).newPage();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  it('works end to end', async () => {
    // Sign up.
    await page.goto(`${base}/accounts/signup/`);
    await page.fill('#email', EMAIL);
    await page.fill('#password', PASSWORD);
    await screenshot('signup');
    await page.click('button[type=submit]');
    await page.waitForSelector('text=Check your e-mail');
    await screenshot('check-your-email');

    // The verification link, from the .eml the development mailer wrote.
    assert.equal(await sendQueuedMail(t.ctx), 1);
    const mail = readMailbox(t.env.SERVICE_DATA_DIR).find((m) => (m.headers.get('to') ?? '').includes(EMAIL))!;
    const link = new RegExp(`${base}/accounts/confirm-email/[A-Za-z0-9_-]+/`).exec(mail.text)![0];
    await page.goto(link);
    await screenshot('confirm-email');
    await page.click('button:has-text("Confirm")');
    await page.waitForSelector('text=Your e-mail address is confirmed.');

    // Log in.
    await page.fill('#email', EMAIL);
    await page.fill('#password', PASSWORD);
    await screenshot('login');
    await page.click('main button[type=submit]');
    await page.waitForURL(`${base}/accounts/profile/`);
    assert.ok(await page.isVisible('text=(verified)'));
    await screenshot('profile');

    // Enrol TOTP with the secret shown as text.
    await page.click('nav >> text=Security');
    await page.click('button:has-text("Set up an authenticator app")');
    const secret = (await page.textContent('#totp-secret'))!.replace(/\s+/g, '');
    assert.match(secret, /^[A-Z2-7]{32}$/);
    assert.ok(await page.isVisible('img[alt="QR code for your authenticator app"]'));
    await screenshot('mfa-enrol');
    await page.fill('#code', codeFor(secret));
    await page.click('button:has-text("Turn on")');
    await page.waitForSelector('#recovery-codes');
    assert.equal(await page.locator('#recovery-codes li').count(), 10);
    await screenshot('recovery-codes');

    // Log out, and in again with TOTP (the next step's code: the enrolment code is spent).
    await page.click('nav button:has-text("Log out")');
    await page.waitForURL(`${base}/accounts/login/`);
    await page.fill('#email', EMAIL);
    await page.fill('#password', PASSWORD);
    await page.click('main button[type=submit]');
    await page.waitForURL(/\/accounts\/login\/totp\//);
    await screenshot('login-totp');
    await page.fill('#code', codeFor(secret, 1));
    await page.click('button:has-text("Verify")');
    await page.waitForURL(`${base}/accounts/profile/`);

    // Time passes: the login no longer counts as a recent re-authentication.
    await t.ctx.db.kysely
      .updateTable('sessions')
      .set({ reauth_at: new Date(Date.now() - 600_000).toISOString() })
      .execute();
    await page.click('nav >> text=Tokens');
    await page.click('#reauth-link');
    await page.waitForURL(/\/accounts\/reauthenticate\//);
    await screenshot('reauthenticate');
    await page.fill('#password', PASSWORD);
    await page.click('button:has-text("Confirm")');
    await page.waitForURL(`${base}/accounts/tokens/`);

    // Create a token.
    await page.fill('#name', 'laptop');
    await page.check('input[value="read:profile"]');
    await screenshot('tokens-form');
    await page.click('button:has-text("Create token")');
    await page.waitForSelector('#new-token');
    const token = (await page.textContent('#new-token'))!.trim();
    assert.match(token, /^svc_[0-9A-Za-z]{36}$/);
    await screenshot('token-created');

    // Use it over real HTTP.
    const me = await fetch(`${base}/api/v1/me/`, { headers: { Authorization: `Bearer ${token}` } });
    assert.equal(me.status, 200);
    assert.equal((await me.json()).email, EMAIL);

    // A reload does not show it again.
    await page.reload();
    assert.equal(await page.locator('#new-token').count(), 0);

    // Revoke; the next call is 401.
    await page.click('#tokens button:has-text("Revoke")');
    await page.waitForSelector('text=The token has been revoked.');
    await screenshot('token-revoked');
    const denied = await fetch(`${base}/api/v1/me/`, { headers: { Authorization: `Bearer ${token}` } });
    assert.equal(denied.status, 401);
  });
});
