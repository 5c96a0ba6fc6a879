// What every request of the client goes through, as the `fetch` that openapi-fetch calls: the bearer
// credential, User-Agent, an Idempotency-Key on every POST (one per logical call, kept across its
// retries, so a retried create never makes two), bounded waits on 429 and 503, and one re-send after a
// 401 when the caller could refresh its credential. Hand-written because it is small and specific to
// this API's conventions (docs/traffic.md); the retry libraries for fetch do not keep a body and an
// Idempotency-Key across attempts.
import { VERSION } from './version.ts';

export type TokenSource =
  string | null | undefined | (() => string | null | undefined | Promise<string | null | undefined>);

export interface TransportOptions {
  token?: TokenSource;
  /** Retries of a 429 or 503 answer (default 3). */
  maxRetries?: number;
  /** The longest Retry-After the client waits for, in ms (default 30 000); a longer one is answered at once. */
  maxRetryDelayMs?: number;
  /** Called after a 401; when it resolves true (a fresh credential is ready), the request is sent once more. */
  onUnauthorized?: () => boolean | Promise<boolean>;
  /** Added to the User-Agent, e.g. `svc-cli/0.1.0`. */
  userAgent?: string;
  fetch?: (request: Request) => Promise<Response>;
}

const RETRIED = new Set([429, 503]);

/** Retry-After in ms: delta-seconds or an HTTP date; 1 s when absent or unreadable. */
export function retryAfterMs(header: string | null, now = Date.now()): number {
  if (header === null) return 1000;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? 1000 : Math.max(0, date - now);
}

function sleep(ms: number, signal: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}

export async function resolveToken(token: TokenSource): Promise<string | null> {
  return (typeof token === 'function' ? await token() : token) ?? null;
}

export function createTransport(options: TransportOptions): (request: Request) => Promise<Response> {
  const send = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const maxRetries = options.maxRetries ?? 3;
  const maxDelay = options.maxRetryDelayMs ?? 30_000;
  const userAgent = `svc-client/${VERSION}${options.userAgent ? ` ${options.userAgent}` : ''}`;

  return async function transport(request: Request): Promise<Response> {
    const headers = new Headers(request.headers);
    headers.set('User-Agent', userAgent);
    if (request.method === 'POST' && !headers.has('Idempotency-Key'))
      headers.set('Idempotency-Key', crypto.randomUUID());
    // The body is read once and sent again as it is on every attempt (a Request's body is a one-shot stream).
    const body = request.body ? await request.arrayBuffer() : undefined;
    const attempt = async () => {
      const token = await resolveToken(options.token);
      if (token) headers.set('Authorization', `Bearer ${token}`);
      return send(
        new Request(request.url, { method: request.method, headers, body, signal: request.signal, redirect: 'manual' }),
      );
    };

    let response = await attempt();
    let refreshed = false;
    for (let retries = 0; ;) {
      if (response.status === 401 && !refreshed && options.onUnauthorized) {
        refreshed = true;
        if (await options.onUnauthorized()) {
          await response.body?.cancel();
          response = await attempt();
          continue;
        }
      }
      if (!RETRIED.has(response.status) || retries >= maxRetries) return response;
      const delay = retryAfterMs(response.headers.get('retry-after'));
      if (delay > maxDelay) return response;
      await response.body?.cancel();
      await sleep(delay, request.signal);
      retries++;
      response = await attempt();
    }
  };
}
