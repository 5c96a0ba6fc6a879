// The one place page code turns a service's refusal into what a page shows: an HTTP status and the
// service's own sentence. Services throw a DomainError, or an HttpProblem for bad input; pages call
// them through attempt() and show the refusal on the page they re-render, or throw it on as a
// problem for the error page. Anything else is a fault and goes on to the error handler as it is.
import { statusOf } from '../http/error-answers.ts';
import { HttpProblem } from '../http/problem.ts';
import { DomainError, ValidationError } from '../util/domain-errors.ts';

export interface Refusal {
  status: number;
  message: string;
}

/** The refusal an error stands for, or null when it is no refusal (a fault). */
export function refusalOf(error: unknown): Refusal | null {
  if (error instanceof ValidationError)
    return { status: statusOf(error), message: error.fieldErrors?.[0]?.message ?? error.message };
  if (error instanceof DomainError) return { status: statusOf(error), message: error.message };
  if (error instanceof HttpProblem && error.status < 500)
    return { status: error.status, message: error.errors?.[0]?.message ?? error.detail };
  return null;
}

export type Attempt<T> = { ok: true; value: T } | ({ ok: false } & Refusal);

/** Runs a service call: its value, or its refusal as a value; a fault is thrown on. */
export async function attempt<T>(
  work: () => Promise<T>,
  refusal: (error: unknown) => Refusal | null = refusalOf,
): Promise<Attempt<T>> {
  try {
    return { ok: true, value: await work() };
  } catch (error) {
    const refused = refusal(error);
    if (!refused) throw error;
    return { ok: false, ...refused };
  }
}

/** The refusal as the problem the pages' error handler renders as an error page with that status. */
export const refusalProblem = (refusal: Refusal) => new HttpProblem(refusal.status, refusal.message);
