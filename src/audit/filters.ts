// The audit-log API's filters, read from the query string: a value that is not what the filter takes
// is a 400 naming the parameter (never an empty page that looks like "nothing happened").
import { ValidationError } from '../util/domain-errors.ts';
import { AUDIT_ACTION_NAMES, isAuditAction } from './actions.ts';
import type { AuditFilters } from './store.ts';

export interface AuditQuery {
  action?: string;
  actor_id?: string;
  since?: string;
  until?: string;
}

// A calendar date, optionally with a time of day and then a zone (Z or an offset): an instant
// without a zone would depend on where the client is.
const INSTANT = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2}))?$/i;

/** An ISO 8601 date or date-time with a zone, as the stored fixed-width UTC form; null if it is none. */
export function parseInstant(text: string): string | null {
  const match = INSTANT.exec(text);
  if (!match) return null;
  const [, year, month, day, hour = '0', minute = '0', second = '0'] = match;
  const daysInMonth = new Date(Date.UTC(Number(year), Number(month), 0)).getUTCDate();
  if (Number(month) < 1 || Number(month) > 12 || Number(day) < 1 || Number(day) > daysInMonth) return null;
  if (Number(hour) > 23 || Number(minute) > 59 || Number(second) > 59) return null;
  const ms = Date.parse(text.toUpperCase());
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
}

const invalid = (field: string, message: string) => new ValidationError(`${field}: ${message}`, [{ field, message }]);

export function readAuditFilters(query: AuditQuery): AuditFilters {
  const filters: AuditFilters = {};
  if (query.action !== undefined) {
    if (!isAuditAction(query.action))
      throw invalid('action', `Not an audit action; one of: ${AUDIT_ACTION_NAMES.join(', ')}.`);
    filters.action = query.action;
  }
  if (query.actor_id !== undefined) {
    if (!/^\d{1,15}$/.test(query.actor_id)) throw invalid('actor_id', 'Must be a user id (a whole number).');
    filters.actorId = Number(query.actor_id);
  }
  for (const field of ['since', 'until'] as const) {
    const value = query[field];
    if (value === undefined) continue;
    const instant = parseInstant(value);
    if (instant === null)
      throw invalid(
        field,
        'Must be an ISO 8601 date or date-time with a zone, such as 2026-01-31 or 2026-01-31T12:00:00Z.',
      );
    filters[field] = instant;
  }
  if (filters.since !== undefined && filters.until !== undefined && filters.since >= filters.until) {
    throw invalid('until', 'Must be later than since.');
  }
  return filters;
}
