// Receiver side: verifies an X-Service-Signature header (docs/webhooks.md shows it in use).
// Accepts when any v1 value matches (several are sent while a secret rotation overlaps) and the
// timestamp is within the tolerance of now. Comparison is constant-time.
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface VerifyOptions {
  /** Largest accepted distance between `t` and now, in seconds (default 300). */
  toleranceSeconds?: number;
  /** Unix seconds to compare against; defaults to the clock. */
  now?: number;
}

export function verifyWebhookSignature(
  secret: string,
  header: string | undefined | null,
  rawBody: string | Uint8Array,
  options: VerifyOptions = {},
): boolean {
  if (typeof header !== 'string' || header.length > 4096) return false;
  let timestamp: number | null = null;
  const candidates: Buffer[] = [];
  for (const part of header.split(',')) {
    const [key, value] = part.trim().split('=', 2);
    if (key === 't' && /^\d{1,12}$/.test(value ?? '')) timestamp = Number(value);
    else if (key === 'v1' && /^[0-9a-f]{64}$/.test(value ?? '')) candidates.push(Buffer.from(value, 'hex'));
  }
  if (timestamp === null || candidates.length === 0) return false;
  const now = options.now ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - timestamp) > (options.toleranceSeconds ?? 300)) return false;
  const expected = createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${timestamp}.`).update(rawBody).digest();
  let matched = false;
  // No early exit: every candidate is compared, so timing says nothing about which one matched.
  for (const candidate of candidates) matched = timingSafeEqual(candidate, expected) || matched;
  return matched;
}
