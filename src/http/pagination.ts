// Page-number pagination (docs/api.md, "Pagination"): fixed page size 50, `page` from 1,
// absolute next/previous links built on BASE_URL that keep the other query parameters.
import type { FastifyRequest } from 'fastify';
import { NotFoundError, ValidationError } from '../util/domain-errors.ts';

export const PAGE_SIZE = 50;

/**
 * The deepest page-number page of a list that also offers cursor pagination (a team's members):
 * a page costs the entries it skips, so page-number reads stop at the first 10,000 items and a
 * longer list is read with the cursor, whose pages all cost the same (docs/api.md, "Pagination").
 */
export const PAGE_NUMBER_MAX_DEPTH = 200;

export interface PageEnvelope<T> {
  count: number;
  next: string | null;
  previous: string | null;
  results: T[];
}

export interface PageRequest {
  page: number;
  limit: number;
  offset: number;
}

/**
 * Reads `page` from the query string; anything but a positive integer is 404 "Invalid page.".
 * With `maxDepth` (a list that offers cursor pagination too), a deeper page is a 400 that says so.
 */
export function pageRequest(request: FastifyRequest, options: { maxDepth?: number } = {}): PageRequest {
  const value = (request.query as Record<string, unknown> | undefined)?.page;
  const text = value === undefined ? '1' : String(value);
  if (!/^\d{1,9}$/.test(text) || Number(text) < 1) throw new NotFoundError('Invalid page.');
  const page = Number(text);
  if (options.maxDepth !== undefined && page > options.maxDepth) {
    const items = (options.maxDepth * PAGE_SIZE).toLocaleString('en-US');
    throw new ValidationError(
      `Page-number pagination of this list stops at page ${options.maxDepth} (its first ${items} items). Read further with cursor pagination: send page_size (and no page), then follow the next links.`,
      [
        {
          field: 'page',
          message: `At most ${options.maxDepth}; use cursor pagination (page_size, cursor) for deeper pages.`,
        },
      ],
    );
  }
  return { page, limit: PAGE_SIZE, offset: (page - 1) * PAGE_SIZE };
}

function pageUrl(baseUrl: string, request: FastifyRequest, page: number): string {
  const url = new URL(request.url, baseUrl + '/');
  const target = new URL(baseUrl + url.pathname);
  url.searchParams.forEach((value, key) => {
    if (key !== 'page') target.searchParams.append(key, value);
  });
  if (page > 1) target.searchParams.set('page', String(page));
  return target.toString();
}

/** Builds the envelope; a page past the end (other than page 1 of an empty set) is 404. */
export function pageEnvelope<T>(
  baseUrl: string,
  request: FastifyRequest,
  paging: PageRequest,
  count: number,
  results: T[],
): PageEnvelope<T> {
  const lastPage = Math.max(1, Math.ceil(count / PAGE_SIZE));
  if (paging.page > lastPage) throw new NotFoundError('Invalid page.');
  return {
    count,
    next: paging.page < lastPage ? pageUrl(baseUrl, request, paging.page + 1) : null,
    previous: paging.page > 1 ? pageUrl(baseUrl, request, paging.page - 1) : null,
    results,
  };
}
