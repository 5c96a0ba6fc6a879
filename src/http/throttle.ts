// Request throttling (docs/traffic.md): fixed windows counted in process (FixedWindows, synchronous,
// same counting as rate-limiter-flexible's RateLimiterMemory) or, when REDIS_URL is set, by
// rate-limiter-flexible in Redis (RateLimiterRedis: one Lua script per hit, so any number of
// processes share one exact count). Three buckets:
//   user:<id>      authenticated requests, every credential kind of the user together
//   anon:<address> requests without a valid credential, per client address
//   auth:<address> credential-issuing endpoints, per client address
// If Redis cannot answer, each process falls back to its own in-memory limiter (the library's
// insuranceLimiter) and logs it: the API keeps answering, limits are then per process.
import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';
import ipaddr from 'ipaddr.js';
import type * as Flexible from 'rate-limiter-flexible';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Config, RateSpec } from '../config.ts';
import { FixedWindows } from './fixed-windows.ts';
import { ratePolicy, rateLimitField, type RatePolicy, type RateResult, type ThrottleKind } from './ratelimit-fields.ts';

// Only the limiter classes used are loaded (the package's index loads every store it supports),
// and the Redis ones only with REDIS_URL: startup time and memory (docs/architecture.md, "Lazy loading").
const require = createRequire(import.meta.url);
const RateLimiterRes: typeof Flexible.RateLimiterRes = require('rate-limiter-flexible/lib/RateLimiterRes');
type RateLimiterRes = Flexible.RateLimiterRes;

export type { RateResult, ThrottleKind } from './ratelimit-fields.ts';

/** The subset of a pino logger the throttle uses. */
export interface ThrottleLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

const silentLog: ThrottleLog = { info() {}, warn() {} };

// Redis must never hold a request up: no offline queue (a command while disconnected fails at once
// and the insurance limiter answers), no retries of a failed command, short connect and command
// timeouts (a Redis that accepts connections but stalls counts as down).
const REDIS_CONNECT_TIMEOUT_MS = 1000;
const REDIS_COMMAND_TIMEOUT_MS = 1000;
// After a failed Redis call, requests go straight to the local fallback for this long instead of
// each waiting out a command timeout against a stalled server (a small circuit breaker).
const REDIS_SUSPEND_MS = 2000;

/**
 * Redis mode's per-process fallback (the library's insuranceLimiter), which tells `onUse` whenever it
 * counts, so the Throttle can log the outage once and later its end. Loaded with REDIS_URL only: memory
 * mode counts in FixedWindows.
 */
function insuranceLimiter(spec: RateSpec, keyPrefix: string, onUse: () => void): RateLimiterAbstract {
  const RateLimiterMemory: typeof Flexible.RateLimiterMemory = require('rate-limiter-flexible/lib/RateLimiterMemory');
  class InsuranceLimiter extends RateLimiterMemory {
    override consume(key: string | number, points?: number, options?: { [key: string]: unknown }) {
      onUse();
      return super.consume(key, points, options);
    }
  }
  return new InsuranceLimiter({ keyPrefix, points: spec.limit, duration: spec.windowSeconds });
}

export class Throttle {
  readonly mode: 'memory' | 'redis';
  readonly #specs: Record<ThrottleKind, RateSpec>;
  readonly #policies: Record<ThrottleKind, RatePolicy>;
  /** Memory mode: the synchronous in-process store (null in Redis mode). */
  readonly #windows: Record<ThrottleKind, FixedWindows> | null = null;
  /** Redis mode: the Redis limiters. */
  readonly #limiters: Record<ThrottleKind, RateLimiterAbstract> | null = null;
  /** The in-memory insurance limiters behind the Redis ones (null in memory mode). */
  readonly #fallbacks: Record<ThrottleKind, RateLimiterAbstract> | null = null;
  readonly #redis: Redis | null = null;
  #log: ThrottleLog = silentLog;
  #fallbackActive = false;
  #suspendedUntil = 0;
  #closed = false;
  /** Told of each refusal, by bucket: the metrics' rate_limit_refusals_total (metrics/metrics.ts). */
  onRefusal: ((kind: ThrottleKind) => void) | null = null;

  constructor(config: Config) {
    this.#specs = { anon: config.throttleAnon, user: config.throttleUser, auth: config.throttleAuth };
    // The RateLimit-Policy values depend on the settings only: built here, once per bucket.
    const policies = {
      anon: ratePolicy('anon', config.throttleAnon),
      user: ratePolicy('user', config.throttleUser),
      auth: ratePolicy('auth', config.throttleAuth),
    };
    this.#policies = policies;
    if (!config.redisUrl) {
      this.mode = 'memory';
      const windows = (kind: ThrottleKind) => new FixedWindows(this.#specs[kind], policies[kind]);
      this.#windows = { anon: windows('anon'), user: windows('user'), auth: windows('auth') };
      return;
    }
    this.mode = 'redis';
    // lazyConnect: building the context (CLI commands, the worker) opens no connection; the HTTP
    // app connects in its onReady hook (connect()).
    const { Redis } = require('ioredis') as typeof import('ioredis');
    const RateLimiterRedis: typeof Flexible.RateLimiterRedis = require('rate-limiter-flexible/lib/RateLimiterRedis');
    const redis = new Redis(config.redisUrl, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: REDIS_CONNECT_TIMEOUT_MS,
      commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
      // Concurrent requests' scripts go out in one write: fewer syscalls on the hot path.
      enableAutoPipelining: true,
      retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
    });
    this.#redis = redis;
    redis.on('error', (error: Error) => this.#redisDown(error));
    redis.on('ready', () => this.#redisUp());
    const prefix = `${config.redisKeyPrefix}throttle`;
    const fallbacks = {} as Record<ThrottleKind, RateLimiterAbstract>;
    this.#fallbacks = fallbacks;
    const redisLimiter = (kind: ThrottleKind) => {
      const spec = this.#specs[kind];
      const insurance = insuranceLimiter(spec, kind, () => this.#fallbackUsed());
      fallbacks[kind] = insurance;
      return new RateLimiterRedis({
        storeClient: redis,
        keyPrefix: `${prefix}:${kind}`,
        points: this.#specs[kind].limit,
        duration: this.#specs[kind].windowSeconds,
        rejectIfRedisNotReady: true,
        insuranceLimiter: insurance,
        // Once a key is over its limit, refuse it locally until the window ends instead of
        // asking Redis again: a flood of refused requests costs Redis nothing.
        inMemoryBlockOnConsumed: this.#specs[kind].limit + 1,
      });
    };
    this.#limiters = { anon: redisLimiter('anon'), user: redisLimiter('user'), auth: redisLimiter('auth') };
  }

  /** The limit of a bucket kind (for documentation and tests). */
  spec(kind: ThrottleKind): RateSpec {
    return this.#specs[kind];
  }

  /**
   * Connects to Redis (when configured) and waits for it, at most the connect timeout. An
   * unreachable Redis is logged and the service starts anyway on the local fallback; the client
   * keeps reconnecting in the background.
   */
  async connect(log: ThrottleLog): Promise<void> {
    this.#log = log;
    const redis = this.#redis;
    if (!redis || this.#closed || redis.status !== 'wait') return;
    let timer: NodeJS.Timeout | undefined;
    // connect() waits for the ready check, which a server that accepts and never answers would
    // hold forever; the start must not.
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('Redis did not become ready in time')), REDIS_CONNECT_TIMEOUT_MS * 2);
    });
    try {
      await Promise.race([redis.connect(), timeout]);
    } catch (error) {
      this.#redisDown(error as Error);
    } finally {
      clearTimeout(timer);
    }
  }

  /** True while Redis is unreachable and each process counts on its own (for health reports and tests). */
  get usingFallback(): boolean {
    return this.#fallbackActive;
  }

  /**
   * Counts one request in the bucket `kind` of `key` (a user id for 'user', a client address for
   * 'anon' and 'auth'). Never rejects: a store failure fails open (logged). Memory mode answers
   * synchronously; Redis mode with a promise.
   */
  consume(kind: ThrottleKind, key: string): RateResult | Promise<RateResult> {
    const bucket = kind === 'user' ? key : addressBucket(key);
    if (this.#windows !== null) {
      const result = this.#windows[kind].consume(bucket);
      if (!result.allowed) this.onRefusal?.(kind);
      return result;
    }
    const spec = this.#specs[kind];
    const policy = this.#policies[kind];
    const limiter =
      this.#fallbacks !== null && this.#suspendedUntil !== 0 && Date.now() < this.#suspendedUntil
        ? this.#fallbacks[kind]
        : this.#limiters![kind];
    return limiter.consume(bucket).then(
      (res) => {
        if (this.#fallbackActive) this.#checkRecovered();
        return toResult(true, spec.limit, policy, res);
      },
      (refusal: unknown) => {
        if (this.#fallbackActive) this.#checkRecovered();
        if (refusal instanceof RateLimiterRes) {
          this.onRefusal?.(kind);
          return toResult(false, spec.limit, policy, refusal);
        }
        // Neither Redis nor the fallback could count: answer rather than fail the request.
        this.#log.warn({ err: refusal, bucket: kind }, 'throttle store failed; request let through');
        return { allowed: true, limit: spec.limit, remaining: spec.limit, resetSeconds: spec.windowSeconds, policy };
      },
    );
  }

  /** Closes the Redis connection (the app's onClose). Safe to call more than once. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const redis = this.#redis;
    if (!redis || redis.status === 'end' || redis.status === 'wait') {
      redis?.disconnect();
      return;
    }
    try {
      await redis.quit();
    } catch {
      redis.disconnect();
    }
  }

  #redisDown(error: Error) {
    if (this.#closed || this.#fallbackActive) return;
    this.#fallbackActive = true;
    this.#log.warn({ err: error }, 'Redis unreachable: throttling falls back to per-process in-memory limits');
  }

  #fallbackUsed() {
    this.#suspendedUntil = Date.now() + REDIS_SUSPEND_MS;
    if (!this.#fallbackActive) this.#redisDown(new Error(`Redis connection is ${this.#redis?.status}`));
  }

  /**
   * After a stall (no reconnect, so no 'ready' event): a call that did not fall back, made after
   * the suspension ended, means Redis answers again.
   */
  #checkRecovered() {
    if (this.#redis?.status === 'ready' && Date.now() >= this.#suspendedUntil) this.#redisUp();
  }

  #redisUp() {
    this.#suspendedUntil = 0;
    if (!this.#fallbackActive) return;
    this.#fallbackActive = false;
    this.#log.info({}, 'Redis reachable again: throttling is shared across processes');
  }
}

function toResult(allowed: boolean, limit: number, policy: RatePolicy, res: RateLimiterRes): RateResult {
  const ms = res.msBeforeNext;
  const seconds = ms > 0 ? Math.ceil(ms / 1000) : 0;
  return {
    allowed,
    limit,
    remaining: allowed ? res.remainingPoints : 0,
    resetSeconds: allowed ? seconds : Math.max(1, seconds),
    policy,
  };
}

/**
 * The bucket of a client address. IPv6 clients are counted per /64: one subscriber usually holds
 * a whole /64 and could otherwise rotate addresses to get fresh buckets.
 */
function addressBucket(address: string): string {
  if (!address.includes(':')) return address;
  try {
    const parts = ipaddr.IPv6.parse(address).parts;
    return `${parts[0].toString(16)}:${parts[1].toString(16)}:${parts[2].toString(16)}:${parts[3].toString(16)}::/64`;
  } catch {
    return address;
  }
}

/** The three X-RateLimit-* headers of a result and the IETF RateLimit-Policy and RateLimit fields. */
export function rateLimitHeaders(result: RateResult): Record<string, string> {
  return {
    'X-RateLimit-Limit': String(result.limit),
    'X-RateLimit-Remaining': String(result.remaining),
    'X-RateLimit-Reset': String(result.resetSeconds),
    'RateLimit-Policy': result.policy.policyField,
    RateLimit: rateLimitField(result.policy, result.remaining, result.resetSeconds),
  };
}

/** The 429 `detail`, word for word as documented (clients may match it: docs/traffic.md). */
export function throttledDetail(seconds: number): string {
  return `Request was throttled. Expected available in ${seconds} ${seconds === 1 ? 'second' : 'seconds'}.`;
}
