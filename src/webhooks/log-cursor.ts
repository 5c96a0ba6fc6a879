// Cursor pagination of the delivery log (SPEC "Pagination envelopes": next, previous, results, no
// count), newest first. A cursor is an opaque base64url token holding a direction and a row id:
// `n:<id>` = rows older than id, `p:<id>` = rows newer than id. Stable under inserts (new rows
// never shift a page) and one index range scan per page.
// Written locally because the shared src/http/cursor.ts was not committed when this was built.
import type { FastifyRequest } from 'fastify';
import { notFound } from '../http/problem.ts';

export const LOG_PAGE_SIZE = 50;

export interface LogCursor {
  direction: 'next' | 'previous';
  id: number;
}

/** Reads `cursor`; a malformed one is 404 "Invalid cursor." (as DRF answers). */
export function readLogCursor(value: string | undefined): LogCursor | null {
  if (value === undefined || value === '') return null;
  const decoded = Buffer.from(value, 'base64url').toString('utf8');
  const match = /^([np]):(\d{1,15})$/.exec(decoded);
  if (!match) throw notFound('Invalid cursor.');
  return { direction: match[1] === 'n' ? 'next' : 'previous', id: Number(match[2]) };
}

function link(baseUrl: string, request: FastifyRequest, token: string): string {
  const url = new URL(request.url, baseUrl + '/');
  const target = new URL(baseUrl + url.pathname);
  url.searchParams.forEach((value, key) => {
    if (key !== 'cursor') target.searchParams.append(key, value);
  });
  target.searchParams.set('cursor', Buffer.from(token).toString('base64url'));
  return target.toString();
}

/**
 * Given the rows fetched for a page (LOG_PAGE_SIZE + 1 of them, in the cursor's scan order), builds
 * the envelope: results newest first, and links that exist only when there is something to follow.
 */
export function logPage<T extends { id: number }>(baseUrl: string, request: FastifyRequest, cursor: LogCursor | null, fetched: T[]) {
  const more = fetched.length > LOG_PAGE_SIZE;
  let results = fetched.slice(0, LOG_PAGE_SIZE);
  if (cursor?.direction === 'previous') results = results.reverse();
  const hasOlder = cursor?.direction === 'previous' ? true : more;
  const hasNewer = cursor === null ? false : cursor.direction === 'next' ? true : more;
  const first = results[0];
  const last = results[results.length - 1];
  return {
    next: hasOlder && last ? link(baseUrl, request, `n:${last.id}`) : null,
    previous: hasNewer && first ? link(baseUrl, request, `p:${first.id}`) : null,
    results,
  };
}
