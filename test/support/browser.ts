// Debian's Chromium, driven by playwright-core (never a downloaded browser). The flags keep it off
// the network it cannot reach here: without them it retries background connections at every start.
import fs from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
/** A `skip` value for describe(): the reason when Chromium is not installed, else false. */
export const NO_CHROMIUM = !fs.existsSync(CHROMIUM) && 'no /usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** One headless browser (a test file shares one and opens a context per person). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}
