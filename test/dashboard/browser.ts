// Shared by the dashboard's browser tests: one headless Chromium per test file (Debian's, driven by
// playwright-core), a logged-in page per person, and inspect(): on the page as it is, axe-core (run
// in the page) must find no serious or critical violation, the page must not scroll sideways at a
// phone's width (390 px), and a screenshot at each width goes to test-output/screenshots/dashboard/.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium } from '../support/browser.ts';
import { sendQueuedMail } from '../../src/mail/outbox.ts';
import { TEST_PASSWORD, type TestApp } from '../support/app.ts';
import { readMailbox } from '../mail/eml.ts';

export { NO_CHROMIUM } from '../support/browser.ts';
/** Where every page's screenshots go (git-ignored; CI keeps test-output/). */
export const SCREENSHOTS = fileURLToPath(new URL('../../test-output/screenshots/dashboard/', import.meta.url));
export const DESKTOP = { width: 1100, height: 800 };
export const PHONE = { width: 390, height: 844 };

const axeSource = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export const launch = launchChromium;

/** A fresh browser profile (cookies of its own) and its page; `javaScript: false` for the no-script runs. */
export async function person(
  browser: Browser,
  options: { javaScript?: boolean } = {},
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: DESKTOP, javaScriptEnabled: options.javaScript ?? true });
  return { context, page: await context.newPage() };
}

/** Logs in through the login page (which the browser is sent to, or opened here) and waits for the next page. */
export async function logIn(page: Page, base: string, email: string, password = TEST_PASSWORD) {
  if (!page.url().includes('/accounts/login/')) await page.goto(`${base}/accounts/login/`);
  await page.getByLabel('E-mail address').fill(email);
  await page.getByLabel('Password').fill(password);
  await Promise.all([
    page.waitForURL((url) => !url.pathname.startsWith('/accounts/login/')),
    page.locator('main').getByRole('button', { name: 'Log in' }).click(),
  ]);
}

/** Clicks a button (or link) and waits for the page it leads to; returns that page's status. */
export async function submit(page: Page, locator: ReturnType<Page['locator']>): Promise<number | undefined> {
  const [response] = await Promise.all([page.waitForNavigation(), locator.click()]);
  return response?.status();
}

/** The page's one-line notice, or error, as shown. */
export const noticeOf = (page: Page) => page.locator('main .notice').first().textContent();
export const errorOf = (page: Page) => page.locator('main .error').first().textContent();

const inspected = new Set<string>();

/**
 * Accessibility, phone width and screenshots of the page as it is now, under `name`. The layout
 * is measured at 390 px after the desktop screenshot, then the desktop size comes back.
 */
export async function inspect(page: Page, name: string) {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  inspected.add(name);
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: {
          run(
            context: Document,
            options: object,
          ): Promise<{ violations: { id: string; impact: string | null; nodes: { target: unknown[] }[] }[] }>;
        };
      }
    ).axe;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      targets: v.nodes.map((n) => n.target.join(' ')).slice(0, 5),
    }));
  });
  const grave = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(grave, [], `axe-core on ${name} (${page.url()})`);
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
  await page.setViewportSize(PHONE);
  const widths = await page.evaluate(() => ({
    scroll: document.documentElement.scrollWidth,
    client: document.documentElement.clientWidth,
  }));
  assert.ok(
    widths.scroll <= widths.client,
    `${name} scrolls sideways at ${PHONE.width} px: ${widths.scroll} > ${widths.client} (${page.url()})`,
  );
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}-phone.png`), fullPage: true });
  await page.setViewportSize(DESKTOP);
}

/** Says where the screenshots are (the test runner prints a file's output). */
export function reportScreenshots(file: string) {
  if (inspected.size === 0) return;
  console.log(
    `${path.basename(file)}: screenshots of ${[...inspected].sort().join(', ')} in ${SCREENSHOTS} (each also at ${PHONE.width} px: -phone.png)`,
  );
}

/** Sends the queued mail and returns the newest link under `pathPrefix` in a message to `email`. */
export async function linkFromMail(t: TestApp, email: string, base: string, pathPrefix: string): Promise<string> {
  await sendQueuedMail(t.ctx);
  const messages = readMailbox(t.env.SERVICE_DATA_DIR).filter((m) => m.headers.get('to')?.includes(email));
  assert.ok(messages.length > 0, `no e-mail to ${email}`);
  const escaped = `${base}${pathPrefix}`.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const match = new RegExp(`${escaped}[A-Za-z0-9_-]+/`).exec(messages.at(-1)!.text);
  assert.ok(match, `the e-mail to ${email} carries a ${pathPrefix} link`);
  return match[0];
}
