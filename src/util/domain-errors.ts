// The one error family of the service. A service (or a route) that refuses something throws one of
// these, with the sentence a person reads; it never knows whether the caller is the API, a page or
// the CLI. `http/error-answers.ts` is the one place that turns each kind into an answer: problem
// details, an error page or form message, or the CLI's `svc: …` line and exit code. A DomainError is
// an expected outcome (logged and printed without a stack trace); anything else thrown is a fault.

export interface FieldError {
  field: string;
  message: string;
}

export type DomainErrorKind =
  'invalid' | 'unauthenticated' | 'forbidden' | 'not_found' | 'conflict' | 'gone' | 'unavailable';

export abstract class DomainError extends Error {
  abstract readonly kind: DomainErrorKind;
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** The input breaks a rule. `fieldErrors` name the fields when the rule is about particular ones. */
export class ValidationError extends DomainError {
  readonly kind = 'invalid';
  readonly fieldErrors?: FieldError[];
  constructor(message: string, fieldErrors?: FieldError[]) {
    super(message);
    this.fieldErrors = fieldErrors;
  }
}

/** The credential presented (a password, a refresh token) is refused. */
export class UnauthenticatedError extends DomainError {
  readonly kind = 'unauthenticated';
}

/** The caller is known but may not do this; the message says why. */
export class ForbiddenError extends DomainError {
  readonly kind = 'forbidden';
}

/** Nothing the caller may see answers to that name. */
export class NotFoundError extends DomainError {
  readonly kind = 'not_found';
  constructor(message = 'Not found.') {
    super(message);
  }
}

/** The request is well-formed but collides with the current state (a taken slug, the last owner). */
export class ConflictError extends DomainError {
  readonly kind = 'conflict';
}

/** The thing existed and can no longer be used (an invitation used, revoked, replaced or expired). */
export class GoneError extends DomainError {
  readonly kind = 'gone';
}

/** Cannot be done right now; the same request may succeed after `retryAfterSeconds`. */
export class UnavailableError extends DomainError {
  readonly kind = 'unavailable';
  readonly retryAfterSeconds: number;
  constructor(message: string, retryAfterSeconds: number) {
    super(message);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}
