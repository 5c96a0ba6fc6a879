// Maps the teams service's TeamError codes to problem-details answers.
import { HttpProblem } from '../http/problem.ts';
import { TeamError } from './teams.ts';

const STATUS: Record<TeamError['code'], number> = {
  invalid: 400,
  forbidden: 403,
  not_found: 404,
  gone: 410,
  slug_taken: 409,
  already_member: 409,
  last_owner: 409,
};

export function asProblem(error: unknown): never {
  if (error instanceof TeamError) throw new HttpProblem(STATUS[error.code], error.message);
  throw error;
}
