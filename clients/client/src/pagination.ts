// Walking a list page by page. Both list styles of the API (docs/api.md, "Pagination") answer `next`:
// a page-number envelope {count, next, previous, results} and a cursor one {next, previous, results}.
// The first page is the typed GET with the caller's parameters; every later one is its `next` link.
import type { PathsWithMethod } from 'openapi-typescript-helpers';
import type { ResponseData, SvcClient } from './client.ts';
import type { paths } from './schema.ts';

type GetPath = PathsWithMethod<paths, 'get'>;

/** The answer of a list operation's first page. */
export type PageOf<Path extends GetPath> = ResponseData<paths[Path]['get'], {}>;

/** The GET paths that answer a paginated list (an envelope with `next` and `results`). */
export type ListPath = {
  [Path in GetPath]: PageOf<Path> extends { next?: string | null; results: unknown[] } ? Path : never;
}[GetPath];

/** One item of a list. */
export type ItemOf<Path extends ListPath> = PageOf<Path> extends { results: (infer Item)[] } ? Item : never;

interface Envelope {
  next?: string | null;
}

export async function* pagesOf<Path extends ListPath>(
  client: SvcClient,
  url: Path,
  init?: object,
): AsyncGenerator<PageOf<Path>> {
  let page = (await (client.GET as (u: string, i?: object) => Promise<unknown>)(url, init)) as Envelope;
  yield page as PageOf<Path>;
  while (page.next) {
    page = (await client.request('GET', page.next)).data as Envelope;
    yield page as PageOf<Path>;
  }
}
