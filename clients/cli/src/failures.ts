// The ways a command ends other than success, each with its exit code (docs/cli.md, "Exit codes"):
// 1 a failure, 2 a usage error, 4 authentication needed or refused. An ApiError from the service is
// mapped here: 401 means the credential is missing, expired or revoked (4), anything else is 1.
import { ApiError } from 'svc-client';

export const EXIT = { ok: 0, failure: 1, usage: 2, auth: 4 } as const;

export class CliFailure extends Error {
  readonly code: number;
  /** Lines after the first: one per field error. */
  readonly details: string[];
  constructor(code: number, message: string, details: string[] = []) {
    super(message);
    this.code = code;
    this.details = details;
  }
}

export class UsageError extends CliFailure {
  constructor(message: string) {
    super(EXIT.usage, message);
  }
}

export class AuthRequired extends CliFailure {
  constructor(message: string) {
    super(EXIT.auth, message);
  }
}

/** Any error as `svc-cli: <title>: <detail>` plus field lines, and its exit code. */
export function describeFailure(error: unknown): { code: number; lines: string[] } {
  if (error instanceof ApiError) {
    const code = error.status === 401 ? EXIT.auth : EXIT.failure;
    const detail = error.detail && error.detail !== error.title ? `: ${error.detail}` : '';
    const hint = error.status === 401 ? ' (run `svc-cli login`, or check SVC_TOKEN)' : '';
    const lines = [`svc-cli: ${error.title}${detail}${hint}`, ...error.errors.map((e) => `  ${e.field}: ${e.message}`)];
    return { code, lines };
  }
  if (error instanceof CliFailure)
    return { code: error.code, lines: [`svc-cli: ${error.message}`, ...error.details.map((d) => `  ${d}`)] };
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  if (error instanceof TypeError && cause) {
    // fetch's "fetch failed": the useful part is the cause (ECONNREFUSED, ENOTFOUND, …).
    return {
      code: EXIT.failure,
      lines: [`svc-cli: cannot reach the server: ${cause.code ?? cause.message ?? 'network error'}`],
    };
  }
  return { code: EXIT.failure, lines: [`svc-cli: ${(error as Error)?.message ?? String(error)}`] };
}
