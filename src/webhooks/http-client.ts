// Outbound HTTP for deliveries: undici.request over one keep-alive Agent (fetch() is several times
// slower and follows redirects). The Agent's connect step never looks a name up on its own: it connects to
// an address the SSRF guard has just checked (pinned by the attempt, or resolved and checked right
// there), and passes the original host name as TLS servername so SNI and the certificate check are
// those of the URL. Redirects are not followed (undici.request never does): a 3xx is a failure.
import net from 'node:net';
import tls from 'node:tls';
import { Agent, buildConnector, request } from 'undici';
import type { Readable } from 'node:stream';
import { Deadlines } from './deadlines.ts';
import type { AddressGuard } from './ssrf.ts';
import { SsrfRefusal } from './ssrf.ts';

export const USER_AGENT = 'svc-webhooks/1.0';
export const MAX_RESPONSE_BYTES = 1024;
/** Beyond this much unread response the socket is dropped rather than drained for reuse. */
const MAX_DRAIN_BYTES = 64 * 1024;
const PIN_TTL_MS = 5_000;

export interface DeliveryClientOptions {
  guard: AddressGuard;
  timeoutMs: number;
  /** Extra trusted CA certificates (tests); production uses the system store. */
  ca?: string | Buffer | Array<string | Buffer>;
  connections?: number;
}

export interface PostResult {
  statusCode: number | null;
  body: string | null;
  /** The answer's Retry-After header, if any. */
  retryAfter?: string | string[];
}

export class DeliveryClient {
  readonly #agent: Agent;
  readonly #guard: AddressGuard;
  readonly #timeoutMs: number;
  readonly #deadlines: Deadlines;
  /** Host name → addresses the guard checked for the attempt about to connect. */
  readonly #pinned = new Map<string, { addresses: string[]; at: number }>();

  constructor(options: DeliveryClientOptions) {
    this.#guard = options.guard;
    this.#timeoutMs = options.timeoutMs;
    this.#deadlines = new Deadlines(options.timeoutMs);
    // One TLS context for every connection: tls.connect() otherwise builds one per connection,
    // a costly step paid again whenever a receiver's connection is opened.
    const tlsConnect = buildConnector({
      timeout: options.timeoutMs,
      secureContext: tls.createSecureContext(options.ca ? { ca: options.ca } : {}),
    } as buildConnector.BuildOptions);
    this.#agent = new Agent({
      keepAliveTimeout: 30_000,
      connections: options.connections ?? null,
      connect: (opts, callback) => {
        this.#addressFor(opts.hostname).then(
          (address) => {
            const servername = net.isIP(opts.hostname) ? undefined : opts.hostname;
            tlsConnect({ ...opts, hostname: address, servername } as buildConnector.Options, callback);
          },
          (error: Error) => callback(error, null),
        );
      },
    });
  }

  async #addressFor(hostname: string): Promise<string> {
    const pinned = this.#pinned.get(hostname);
    if (pinned && Date.now() - pinned.at < PIN_TTL_MS) return pinned.addresses[0];
    return (await this.#guard.addressesFor(hostname))[0];
  }

  /**
   * Checks the destination again (new DNS answers included), then POSTs. The whole attempt,
   * resolution included, is bounded by the delivery timeout. Throws on network errors, timeouts and
   * guard refusals (SsrfRefusal); returns the status and the first 1 KB of any answer.
   */
  async post(url: URL, headers: Record<string, string>, body: string): Promise<PostResult> {
    const deadline = this.#deadlines.start();
    try {
      const addresses = await deadline.race(this.#guard.addressesFor(url.hostname));
      const host = url.hostname.replace(/^\[|\]$/g, '');
      if (!net.isIP(host)) {
        // Bounded: stale pins are dropped once the map grows (one entry per distinct host).
        if (this.#pinned.size >= 1000)
          for (const [name, pin] of this.#pinned) if (Date.now() - pin.at >= PIN_TTL_MS) this.#pinned.delete(name);
        this.#pinned.set(host, { addresses, at: Date.now() });
      }
      const response = await request(url, {
        method: 'POST',
        headers,
        body,
        dispatcher: this.#agent,
        signal: deadline,
        headersTimeout: this.#timeoutMs,
        bodyTimeout: this.#timeoutMs,
      });
      // The deadline bounds the answer too: undici destroys the body with the timeout error.
      return {
        statusCode: response.statusCode,
        body: await readAnswer(response.body),
        retryAfter: response.headers['retry-after'],
      };
    } finally {
      deadline.clear();
    }
  }

  close(): Promise<void> {
    return this.#agent.close();
  }
}

/**
 * The first MAX_RESPONSE_BYTES of an answer, as text. The rest is read and dropped, so the
 * connection can be reused, up to MAX_DRAIN_BYTES; beyond that the socket is destroyed instead.
 * (Event handlers rather than `for await`: the async iterator adds work to every attempt.)
 */
function readAnswer(stream: Readable): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let kept = 0;
    let seen = 0;
    // PostgreSQL text cannot hold NUL: a body with one would make the result unwritable, and the
    // row would be attempted again after every lease. Replaced, as invalid UTF-8 is.
    const done = () => resolve(Buffer.concat(chunks).toString('utf8').replaceAll('\0', '\uFFFD'));
    stream.on('data', (chunk: Buffer) => {
      seen += chunk.length;
      if (kept < MAX_RESPONSE_BYTES) {
        const part = chunk.subarray(0, MAX_RESPONSE_BYTES - kept);
        chunks.push(part);
        kept += part.length;
      }
      if (seen > MAX_DRAIN_BYTES) {
        stream.destroy();
        done();
      }
    });
    stream.on('end', done);
    stream.on('error', reject);
  });
}

/** The words a log row keeps for an attempt that got no HTTP answer. */
export function describeFailure(error: unknown): string {
  if (error instanceof SsrfRefusal) return `Refused by the SSRF guard: ${error.message}`;
  const err = error as NodeJS.ErrnoException & { cause?: NodeJS.ErrnoException };
  if (
    err?.name === 'TimeoutError' ||
    err?.code === 'UND_ERR_HEADERS_TIMEOUT' ||
    err?.code === 'UND_ERR_BODY_TIMEOUT' ||
    err?.code === 'UND_ERR_CONNECT_TIMEOUT'
  ) {
    return 'Timed out.';
  }
  const code = err?.code ?? err?.cause?.code;
  const message = err?.message ?? String(error);
  return (code && !message.includes(code) ? `${code}: ${message}` : message).slice(0, MAX_RESPONSE_BYTES);
}
