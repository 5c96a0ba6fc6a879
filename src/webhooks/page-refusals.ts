// The webhook pages' reading of a refusal: the webhooks services refuse with WebhookError and
// RetryRefused, which the pages show with the statuses the API answers them with; any other refusal
// as every page reads it (web/refusals.ts).
import { attempt as attemptAny, refusalOf, type Attempt, type Refusal } from '../web/refusals.ts';
import { RetryRefused } from './queue.ts';
import { WebhookError } from './subscriptions.ts';

// The API's statuses for the same refusals (subscription-routes.ts, log-routes.ts).
const WEBHOOK_STATUS: Record<WebhookError['code'], number> = { invalid: 400, conflict: 409, not_found: 404 };

export function webhookRefusalOf(error: unknown): Refusal | null {
  if (error instanceof WebhookError) return { status: WEBHOOK_STATUS[error.code], message: error.message };
  if (error instanceof RetryRefused) return { status: 409, message: error.message };
  return refusalOf(error);
}

/** Runs a webhooks service call: its value, or its refusal as a value; a fault is thrown on. */
export const attempt = <T>(work: () => Promise<T>): Promise<Attempt<T>> => attemptAny(work, webhookRefusalOf);
