// RFC 9457 problem details: the one error shape of the API (docs/api.md, "Errors").
import { STATUS_CODES } from 'node:http';
import type { FieldError } from '../util/domain-errors.ts';

export type { FieldError };

/**
 * An answer only HTTP has words for, thrown by hooks and the transport (a missing credential with its
 * WWW-Authenticate, a missing scope, CSRF, throttling, an unsupported media type). What a service or
 * route refuses is a DomainError instead (util/domain-errors.ts); the error handler answers both.
 */
export class HttpProblem extends Error {
  readonly status: number;
  readonly detail: string;
  readonly errors?: FieldError[];
  readonly headers?: Record<string, string>;
  readonly extra?: Record<string, unknown>;
  constructor(
    status: number,
    detail: string,
    options: { errors?: FieldError[]; headers?: Record<string, string>; extra?: Record<string, unknown> } = {},
  ) {
    super(detail);
    this.status = status;
    this.detail = detail;
    this.errors = options.errors;
    this.headers = options.headers;
    this.extra = options.extra;
  }
}

export function problemBody(
  status: number,
  detail: string,
  requestId: string,
  errors?: FieldError[],
  extra?: Record<string, unknown>,
) {
  const title = STATUS_CODES[status] ?? 'Error';
  return {
    type: 'about:blank',
    title,
    status,
    detail,
    request_id: requestId,
    ...(errors ? { errors } : {}),
    // Extension members. A registered problem type (the throttle's quota-exceeded) brings its own
    // `type` here, which replaces about:blank and keeps its place as the first member.
    ...extra,
  };
}
