// The one mapping from the DomainError family (util/domain-errors.ts) to what each surface answers:
// the API's problem details (http/errors.ts), the pages' error page or form status (web/render.ts),
// and the CLI's one line and exit code (main.ts). Free of Fastify, as the CLI's entry loads it.
import { isDatabaseBusy } from '../db/busy.ts';
import {
  DomainError,
  UnavailableError,
  ValidationError,
  type DomainErrorKind,
  type FieldError,
} from '../util/domain-errors.ts';

/**
 * Per kind: the HTTP status (API and pages) and the CLI's exit code. A rule the input breaks is, on
 * the command line, a bad argument: exit 2 with the usage, like an unknown option.
 */
const ANSWERS: Record<DomainErrorKind, { status: number; exitCode: 1 | 2 }> = {
  invalid: { status: 400, exitCode: 2 },
  unauthenticated: { status: 401, exitCode: 1 },
  forbidden: { status: 403, exitCode: 1 },
  not_found: { status: 404, exitCode: 1 },
  conflict: { status: 409, exitCode: 1 },
  gone: { status: 410, exitCode: 1 },
  unavailable: { status: 503, exitCode: 1 },
};

export interface ProblemAnswer {
  status: number;
  detail: string;
  errors?: FieldError[];
  headers?: Record<string, string>;
}

/** The HTTP status of a domain error (for a page that shows it as a form message). */
export const statusOf = (error: DomainError): number => ANSWERS[error.kind].status;

/** A domain error as problem details: the status, its message as `detail`, field errors, Retry-After. */
export function problemOf(error: DomainError): ProblemAnswer {
  const answer: ProblemAnswer = { status: statusOf(error), detail: error.message };
  if (error instanceof ValidationError && error.fieldErrors) answer.errors = error.fieldErrors;
  if (error instanceof UnavailableError) answer.headers = { 'Retry-After': String(error.retryAfterSeconds) };
  return answer;
}

/**
 * SQLite's lock wait ran out (db/busy.ts): nothing of the change was written, so the same request can
 * simply be sent again.
 */
export const databaseBusy = () => new UnavailableError('The database is busy; try again shortly.', 1);

export interface CliFailure {
  /** What follows `svc: ` on stderr. */
  line: string;
  exitCode: 1 | 2;
  /** Print the command's usage after the line (a bad argument). */
  showUsage: boolean;
  /** An expected outcome: --debug adds no stack trace. */
  expected: boolean;
}

/** What the CLI prints and returns for a failure of a command. */
export function cliFailureOf(error: unknown): CliFailure {
  if (error instanceof DomainError) {
    const { exitCode } = ANSWERS[error.kind];
    return {
      line: exitCode === 2 ? error.message : firstLine(error),
      exitCode,
      showUsage: exitCode === 2,
      expected: true,
    };
  }
  if (isDatabaseBusy(error))
    return { line: 'the database is busy, try again', exitCode: 1, showUsage: false, expected: false };
  return { line: firstLine(error), exitCode: 1, showUsage: false, expected: false };
}

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0].trim() || (error as Error)?.name || 'unexpected error';
}
