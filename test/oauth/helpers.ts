// Helpers for the OAuth tests: an app listening on a real socket whose BASE_URL (the issuer) is its
// own address, form/JSON posts over real HTTP, PKCE values, and headless Chromium (Debian's).
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { TEST_PASSWORD, startApp, type TestApp } from '../support/app.ts';
import { freePort } from '../support/net.ts';

export const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

export interface OAuthTestApp extends TestApp {
  base: string;
}

/** The app on 127.0.0.1:<port> with BASE_URL = that address (the issuer must be reachable). */
export async function startOAuthApp(env: Record<string, string> = {}): Promise<OAuthTestApp> {
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const t = await startApp({ BASE_URL: base, ...env });
    try {
      await t.app.listen({ port, host: '127.0.0.1' });
      return Object.assign(t, { base });
    } catch (error) {
      await t.close();
      if (attempt >= 3) throw error;
    }
  }
}

export interface Answer {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

async function answer(res: Response): Promise<Answer> {
  const text = await res.text();
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = null;
  }
  return { status: res.status, headers: res.headers, body, text };
}

export async function postForm(
  url: string,
  form: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<Answer> {
  return answer(
    await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(form).toString(),
      redirect: 'manual',
    }),
  );
}

export async function postJson(url: string, json: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  return answer(
    await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: typeof json === 'string' ? json : JSON.stringify(json),
      redirect: 'manual',
    }),
  );
}

export async function get(url: string, headers: Record<string, string> = {}): Promise<Answer> {
  return answer(await fetch(url, { headers, redirect: 'manual' }));
}

export const basic = (id: string, secret: string) => ({
  authorization: `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`,
});

export function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export { launchChromium as launchBrowser } from '../support/browser.ts';

/** Where screenshots of the OAuth pages go (with the other browser tests'), for a person to look at. */
export const SCREENSHOT_DIR = fileURLToPath(new URL('../../test-output/screenshots/', import.meta.url));

export async function screenshot(page: Page, name: string) {
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, `oauth-${name}.png`), fullPage: true });
}

/** Fills and submits the accounts login form the browser is on. */
export async function logIn(page: Page, email: string, password = TEST_PASSWORD) {
  await page.fill('#email', email);
  await page.fill('#password', password);
  await Promise.all([page.waitForLoadState('load'), page.click('form[action="/accounts/login/"] button[type=submit]')]);
}

/** Registers a client by DCR and returns the 201 body. */
export async function register(base: string, body: Record<string, unknown>): Promise<any> {
  const res = await postJson(`${base}/o/register/`, body);
  if (res.status !== 201) throw new Error(`registration failed: ${res.status} ${res.text}`);
  return res.body;
}

export interface Callback {
  url: string;
  received: URL[];
  close(): Promise<void>;
}

/** The client's redirect URI: a local server that records what the browser brings back. */
export async function callbackServer(): Promise<Callback> {
  const received: URL[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname === '/callback') received.push(url);
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end('<!doctype html><html lang="en"><title>client</title><p>back at the client</p></html>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/callback`,
    received,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
