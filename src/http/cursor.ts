// Cursor pagination (docs/traffic.md, "Cursor pagination") for any list route:
//
//   const page = await cursorPage({
//     request, query,                      // query: filtered and selected, not ordered
//     baseUrl: config.baseUrl, secret: config.secretKey!,
//     createdAtColumn: 'l.created_at', idColumn: 'l.id',   // defaults: 'created_at', 'id'
//   });
//   return { ...page, results: page.results.map(toApi) };
//
// Parameters `cursor` and `page_size` (default 50, at most 200: larger values are clamped; 0,
// negative or not a whole number is 400). Envelope {next, previous, results}, no count. Order:
// created time descending, the unique id breaking ties. Paging is by keyset (seek), never by
// offset: a cursor names a position (created time and id of a row) and a direction, so rows
// inserted at the head or deleted meanwhile never make a page repeat or skip a row.
//
// Cursors are opaque to clients: base64url JSON plus an HMAC-SHA256 tag (key derived from
// SECRET_KEY, bound to the request path), so a tampered or transplanted cursor is a 400, never a
// wrong page. Hand-written: the Kysely pagination helpers published (kysely-paginate) sign nothing
// and page one direction per cursor shape; this is one small file.
import { createHmac, hkdfSync, timingSafeEqual, createSecretKey, type KeyObject } from 'node:crypto';
import { Type, type TSchema } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { sql, type SelectQueryBuilder } from 'kysely';
import { ValidationError } from '../util/domain-errors.ts';

export const CURSOR_PAGE_SIZE_DEFAULT = 50;
export const CURSOR_PAGE_SIZE_MAX = 200;

export interface CursorEnvelope<T> {
  next: string | null;
  previous: string | null;
  results: T[];
}

/** Query-string schema for route definitions (OpenAPI); values stay strings, checked here. */
export const CursorQuery = Type.Object({
  cursor: Type.Optional(Type.String({ description: "Opaque cursor from a previous page's next or previous link" })),
  page_size: Type.Optional(
    Type.String({
      description: `Items per page: default ${CURSOR_PAGE_SIZE_DEFAULT}, at most ${CURSOR_PAGE_SIZE_MAX} (larger values are clamped)`,
    }),
  ),
});

/** Response schema of a cursor-paginated list of `item`. */
export function CursorPageOf<T extends TSchema>(item: T) {
  return Type.Object({
    next: Type.Union([Type.String({ format: 'uri' }), Type.Null()], { description: 'URL of the next (older) page' }),
    previous: Type.Union([Type.String({ format: 'uri' }), Type.Null()], {
      description: 'URL of the previous (newer) page',
    }),
    results: Type.Array(item),
  });
}

export interface CursorPageOptions<Row> {
  request: FastifyRequest;
  /** The list's rows: filtered and selected (including the two ordering columns), not ordered or limited. */
  // `any` for the database and tables: any list's query is accepted; its rows keep their type.
  query: SelectQueryBuilder<any, any, Row>;
  /** BASE_URL: next/previous are absolute URLs on it. */
  baseUrl: string;
  /** SECRET_KEY: the cursor tag's key is derived from it. */
  secret: string;
  /** Column (as written in SQL) of the created time, an ISO 8601 UTC string. Default 'created_at'. */
  createdAtColumn?: string;
  /** Column of the unique id (integer or text). Default 'id'. */
  idColumn?: string;
  /** Row properties holding those values, when their names differ from the columns' last segment. */
  createdAtField?: keyof Row & string;
  idField?: keyof Row & string;
}

type Direction = 'n' | 'p';
interface Position {
  createdAt: string;
  id: string | number;
}
interface Cursor extends Position {
  direction: Direction;
}

/** Reads and checks page_size: absent → 50; larger than 200 → 200; 0, negative, not a whole number → 400. */
export function pageSizeOf(request: FastifyRequest): number {
  const value = (request.query as Record<string, unknown> | undefined)?.page_size;
  if (value === undefined) return CURSOR_PAGE_SIZE_DEFAULT;
  const text = typeof value === 'number' ? String(value) : value;
  if (typeof text !== 'string' || !/^\d+$/.test(text) || /^0+$/.test(text)) {
    throw new ValidationError('page_size must be a whole number from 1.', [
      { field: 'page_size', message: `Must be a whole number from 1 (at most ${CURSOR_PAGE_SIZE_MAX} are returned).` },
    ]);
  }
  return Math.min(Number(text), CURSOR_PAGE_SIZE_MAX);
}

export async function cursorPage<Row>(options: CursorPageOptions<Row>): Promise<CursorEnvelope<Row>> {
  const { request, baseUrl } = options;
  const createdAtColumn = options.createdAtColumn ?? 'created_at';
  const idColumn = options.idColumn ?? 'id';
  const createdAtField = (options.createdAtField ?? lastSegment(createdAtColumn)) as keyof Row;
  const idField = (options.idField ?? lastSegment(idColumn)) as keyof Row;
  const path = pathOf(request.url);
  const key = cursorKey(options.secret);
  const size = pageSizeOf(request);
  const cursor = readCursor(request, key, path);

  const columns = sql`(${sql.ref(createdAtColumn)}, ${sql.ref(idColumn)})`;
  const before = (p: Position) => sql<boolean>`${columns} < (${p.createdAt}, ${p.id})`; // older rows
  const after = (p: Position) => sql<boolean>`${columns} > (${p.createdAt}, ${p.id})`; // newer rows
  const positionOf = (row: Row): Position => ({
    createdAt: String(row[createdAtField]),
    id: row[idField] as string | number,
  });
  // Ordered as the condition walks (newer: ascending, older: descending) although any row would do:
  // without an order PostgreSQL's planner prices `limit 1` as a sequential scan that meets a match
  // early, which on a large table whose matches are all at its end reads the whole table; ordered,
  // it walks the list's index from the position and stops at the first row.
  const exists = async (condition: ReturnType<typeof before>, order: 'asc' | 'desc') =>
    (
      await options.query
        .clearSelect()
        .select(sql<number>`1`.as('one'))
        .where(condition)
        .orderBy(sql.ref(createdAtColumn), order)
        .orderBy(sql.ref(idColumn), order)
        .limit(1)
        .execute()
    ).length > 0;
  const link = (direction: Direction, position: Position) =>
    pageUrl(baseUrl, request.url, encodeCursor(key, path, { direction, ...position }));

  if (cursor === null || cursor.direction === 'n') {
    // Forward (older): the rows after the position, newest first.
    let query = options.query;
    if (cursor) query = query.where(before(cursor));
    const rows = await query
      .orderBy(sql.ref(createdAtColumn), 'desc')
      .orderBy(sql.ref(idColumn), 'desc')
      .limit(size + 1)
      .execute();
    const results = rows.slice(0, size);
    const last = results.at(-1);
    const anchor = results.length > 0 ? positionOf(results[0]) : cursor;
    return {
      next: rows.length > size && last !== undefined ? link('n', positionOf(last)) : null,
      // The first page has nothing newer by definition; a later one asks (rows may have been deleted).
      previous: cursor && anchor && (await exists(after(anchor), 'asc')) ? link('p', anchor) : null,
      results,
    };
  }
  // Backward (newer): the rows before the position, read oldest first, then put back in order.
  const rows = await options.query
    .where(after(cursor))
    .orderBy(sql.ref(createdAtColumn), 'asc')
    .orderBy(sql.ref(idColumn), 'asc')
    .limit(size + 1)
    .execute();
  const results = rows.slice(0, size).reverse();
  const anchor = results.length > 0 ? positionOf(results[results.length - 1]) : cursor;
  return {
    next: (await exists(before(anchor), 'desc')) ? link('n', anchor) : null,
    previous: rows.length > size ? link('p', positionOf(results[0])) : null,
    results,
  };
}

// Cursor encoding: base64url(JSON [direction, createdAt, id]) "." base64url(HMAC(path \0 JSON)),
// the tag cut to 128 bits (ample against forgery; keeps the URL short).
const TAG_BYTES = 16;
const keys = new Map<string, KeyObject>();

function cursorKey(secret: string): KeyObject {
  let key = keys.get(secret);
  if (!key) {
    key = createSecretKey(Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'svc cursor pagination v1', 32)));
    keys.set(secret, key);
  }
  return key;
}

function tag(key: KeyObject, path: string, json: string): Buffer {
  return createHmac('sha256', key).update(path).update('\0').update(json).digest().subarray(0, TAG_BYTES);
}

function encodeCursor(key: KeyObject, path: string, cursor: Cursor): string {
  const json = JSON.stringify([cursor.direction, cursor.createdAt, cursor.id]);
  return `${Buffer.from(json).toString('base64url')}.${tag(key, path, json).toString('base64url')}`;
}

function readCursor(request: FastifyRequest, key: KeyObject, path: string): Cursor | null {
  const value = (request.query as Record<string, unknown> | undefined)?.cursor;
  if (value === undefined) return null;
  const invalid = () =>
    new ValidationError('The cursor is invalid; use the next or previous link of a page as given.', [
      { field: 'cursor', message: 'Invalid cursor.' },
    ]);
  if (typeof value !== 'string') throw invalid();
  const dot = value.indexOf('.');
  if (dot < 1) throw invalid();
  const json = Buffer.from(value.slice(0, dot), 'base64url').toString('utf8');
  const given = Buffer.from(value.slice(dot + 1), 'base64url');
  const expected = tag(key, path, json);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid();
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    throw invalid();
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 3 ||
    (parsed[0] !== 'n' && parsed[0] !== 'p') ||
    typeof parsed[1] !== 'string' ||
    (typeof parsed[2] !== 'string' && typeof parsed[2] !== 'number')
  ) {
    throw invalid();
  }
  return { direction: parsed[0], createdAt: parsed[1], id: parsed[2] };
}

/** The same URL on BASE_URL with every other parameter kept, and `cursor` replaced. */
function pageUrl(baseUrl: string, requestUrl: string, cursor: string): string {
  const url = new URL(requestUrl, 'http://placeholder');
  const target = new URL(baseUrl + url.pathname);
  url.searchParams.forEach((value, name) => {
    if (name !== 'cursor') target.searchParams.append(name, value);
  });
  target.searchParams.set('cursor', cursor);
  return target.toString();
}

function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

function lastSegment(column: string): string {
  const dot = column.lastIndexOf('.');
  return dot === -1 ? column : column.slice(dot + 1);
}
