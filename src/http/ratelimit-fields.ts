// The IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers, -08 syntax and later), sent beside
// the specification's X-RateLimit-* trio so that a stock client library can pace itself:
//   RateLimit-Policy: "<bucket>";q=<limit>;w=<window seconds>
//   RateLimit:        "<bucket>";r=<remaining>;t=<seconds until the window resets>
// and the registered problem type of the 429. The policy is named after the bucket that applied
// (anon, user, auth). No partition key (`pk`): it would identify the caller (a user id, an address).
//
// Written out by hand rather than with a structured-field serializer: the members are one fixed
// string and a few non-negative integers, and a serializer would build a list and a parameter map
// on every API request. The tests parse the fields with one (structured-headers).
import type { RateSpec } from '../config.ts';

/** The throttle's buckets: anonymous callers by address, users, and the credential endpoints. */
export type ThrottleKind = 'anon' | 'user' | 'auth';

/** What the throttle answers for one request, and what the rate-limit headers are written from. */
export interface RateResult {
  allowed: boolean;
  /** Requests allowed per window. */
  limit: number;
  remaining: number;
  /** Whole seconds until the window resets (at least 1 while refused). */
  resetSeconds: number;
  /** The bucket that applied, as the RateLimit fields name it. */
  policy: RatePolicy;
}

/** The problem type of a 429 from a bucket (draft-ietf-httpapi-ratelimit-headers, "Quota Exceeded"). */
export const QUOTA_EXCEEDED_TYPE = 'https://iana.org/assignments/http-problem-types#quota-exceeded';

/**
 * A bucket as the RateLimit fields name it, built once per bucket when the throttle is made:
 * everything in it depends only on the bucket's configured limit and window.
 */
export interface RatePolicy {
  readonly name: ThrottleKind;
  /** The RateLimit-Policy field value. */
  readonly policyField: string;
  /** The RateLimit field value up to the remaining count: `"<name>";r=`. */
  readonly limitFieldStart: string;
  /** The 429 problem's members beyond the standard ones (shared, frozen: never mutated). */
  readonly quotaExceeded: Readonly<{ type: string; 'violated-policies': readonly string[] }>;
}

export function ratePolicy(name: ThrottleKind, spec: RateSpec): RatePolicy {
  return Object.freeze({
    name,
    policyField: `"${name}";q=${spec.limit};w=${spec.windowSeconds}`,
    limitFieldStart: `"${name}";r=`,
    quotaExceeded: Object.freeze({ type: QUOTA_EXCEEDED_TYPE, 'violated-policies': Object.freeze([name]) }),
  });
}

/** The RateLimit field value of one answer: the one string built per request. */
export function rateLimitField(policy: RatePolicy, remaining: number, resetSeconds: number): string {
  return `${policy.limitFieldStart}${remaining};t=${resetSeconds}`;
}
