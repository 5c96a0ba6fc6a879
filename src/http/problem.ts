// RFC 9457 problem details: the one error shape of the API (docs/api.md, "Errors").
import { STATUS_CODES } from 'node:http';

export interface FieldError {
  field: string;
  message: string;
}

/** Thrown by routes and hooks; the error handler turns it into an application/problem+json answer. */
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

export function problemBody(status: number, detail: string, requestId: string, errors?: FieldError[], extra?: Record<string, unknown>) {
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

export const notFound = (detail = 'Not found.') => new HttpProblem(404, detail);
export const badRequest = (detail: string, errors?: FieldError[]) => new HttpProblem(400, detail, { errors });
export const forbidden = (detail: string) => new HttpProblem(403, detail);
export const conflict = (detail: string) => new HttpProblem(409, detail);
