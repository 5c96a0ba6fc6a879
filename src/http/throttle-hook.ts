// The throttle as an HTTP concern: which bucket a request counts against, the X-RateLimit-*
// headers and IETF RateLimit fields on every /api/ answer, and the 429 problem. app.ts calls
// throttleRequest() in its onRequest hook right after authentication, for every /api/ path
// (unknown paths included).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ClientAddresses } from './client-address.ts';
import { HttpProblem } from './problem.ts';
import { rateLimitField } from './ratelimit-fields.ts';
import { throttledDetail, type RateResult, type Throttle } from './throttle.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * 'auth': a credential-issuing route; it counts against the per-address SERVICE_THROTTLE_AUTH
     * bucket instead of the user or anonymous one.
     */
    throttle?: 'auth';
  }
}

/**
 * The 429 answer: Retry-After and the documented detail sentence, word for word, as the registered
 * quota-exceeded problem type naming the bucket's policy. Retry-After is never below RateLimit's `t`.
 */
export function throttledProblem(result: RateResult): HttpProblem {
  const seconds = Math.max(1, result.resetSeconds);
  return new HttpProblem(429, throttledDetail(seconds), {
    headers: { 'Retry-After': String(seconds) },
    extra: result.policy.quotaExceeded,
  });
}

/**
 * Sets the three X-RateLimit-* headers and the RateLimit-Policy (precomputed per bucket) and
 * RateLimit fields, without building a header object per request.
 */
export function setRateLimitHeaders(reply: FastifyReply, result: RateResult): void {
  reply.header('X-RateLimit-Limit', result.limit);
  reply.header('X-RateLimit-Remaining', result.remaining);
  reply.header('X-RateLimit-Reset', result.resetSeconds);
  reply.header('RateLimit-Policy', result.policy.policyField);
  reply.header('RateLimit', rateLimitField(result.policy, result.remaining, result.resetSeconds));
}

/**
 * Counts the request: a route marked `config: { throttle: 'auth' }` in the auth bucket of the
 * client address; an authenticated request in its user's bucket; anything else (no credential, or
 * an invalid one, so that guessing tokens is throttled) in the anonymous bucket of the address; a
 * request inside one already counted (identity.precounted) not at all.
 * Calls `done` with the 429 problem when over the limit, so the route does not run. Synchronous in
 * memory mode (no promise on the hot path), asynchronous with Redis.
 */
export function throttleRequest(
  throttle: Throttle,
  clientAddresses: ClientAddresses,
  request: FastifyRequest,
  reply: FastifyReply,
  done: (error?: Error) => void,
): void {
  const identity = request.identity;
  if (identity.precounted) return done();
  const user = identity.user;
  const result =
    request.routeOptions.config?.throttle === 'auth'
      ? throttle.consume('auth', clientAddresses.of(request.raw))
      : user
        ? throttle.consume('user', String(user.id))
        : throttle.consume('anon', clientAddresses.of(request.raw));
  if (result instanceof Promise) result.then((counted) => applyResult(reply, counted, done), done);
  else applyResult(reply, result, done);
}

function applyResult(reply: FastifyReply, result: RateResult, done: (error?: Error) => void): void {
  setRateLimitHeaders(reply, result);
  done(result.allowed ? undefined : throttledProblem(result));
}
