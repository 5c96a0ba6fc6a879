// createClient(): openapi-fetch over the generated types (schema.ts), with the transport of
// transport.ts, and methods that answer the response's data or throw an ApiError, so that a caller
// handles one shape of success and one of failure.
import createFetchClient, { type Client, type FetchResponse, type MaybeOptionalInit } from 'openapi-fetch';
import type { HttpMethod, MediaType, PathsWithMethod, RequiredKeysOf } from 'openapi-typescript-helpers';
import { ApiError } from './errors.ts';
import { pagesOf, type ItemOf, type ListPath, type PageOf } from './pagination.ts';
import type { paths } from './schema.ts';
import { createTransport, type TransportOptions } from './transport.ts';

export interface ClientOptions extends TransportOptions {
  /** The service's address, e.g. `https://api.example.com` (paths start with `/api/`). */
  baseUrl: string;
}

// openapi-fetch's rule for the options argument: required exactly when the operation has a required
// parameter or body (its own InitParam, which the library does not export).
type InitParam<Init> =
  RequiredKeysOf<Init> extends never ? [(Init & { [key: string]: unknown })?] : [Init & { [key: string]: unknown }];

/** The data of a 2xx answer; `undefined` for an answer without a body (204, 202 without content). */
export type ResponseData<Operation, Init> =
  Operation extends Record<string | number, any>
    ? OrUndefined<NonNullable<FetchResponse<Operation, Init, MediaType>['data']>>
    : never;
type OrUndefined<Data> = [Data] extends [never] ? undefined : Data;

export type ApiMethod<Method extends HttpMethod> = <
  Path extends PathsWithMethod<paths, Method>,
  Init extends MaybeOptionalInit<paths[Path], Method>,
>(
  url: Path,
  ...init: InitParam<Init>
) => Promise<ResponseData<paths[Path][Method], Init>>;

export interface RawRequest {
  query?: Record<string, string | number | boolean | (string | number | boolean)[] | undefined>;
  /** Sent as JSON. */
  body?: unknown;
  headers?: Record<string, string>;
}

export interface RawResponse {
  status: number;
  headers: Headers;
  /** Parsed JSON, the text when it is not JSON, null without a body. */
  data: unknown;
}

export interface SvcClient {
  GET: ApiMethod<'get'>;
  POST: ApiMethod<'post'>;
  PUT: ApiMethod<'put'>;
  PATCH: ApiMethod<'patch'>;
  DELETE: ApiMethod<'delete'>;
  /** Every item of a list, page after page (page-number and cursor lists alike: both give `next`). */
  paginate<Path extends ListPath>(
    url: Path,
    ...init: InitParam<MaybeOptionalInit<paths[Path], 'get'>>
  ): AsyncGenerator<ItemOf<Path>>;
  /** Every page of a list, the answers as the API gives them. */
  pages<Path extends ListPath>(
    url: Path,
    ...init: InitParam<MaybeOptionalInit<paths[Path], 'get'>>
  ): AsyncGenerator<PageOf<Path>>;
  /** Any request, untyped (like `svc-cli api`): a path under baseUrl, or a URL on the same origin. */
  request(method: string, pathOrUrl: string, options?: RawRequest): Promise<RawResponse>;
  /** The openapi-fetch client underneath: answers `{data, error, response}` and never throws on a status. */
  raw: Client<paths>;
}

async function readBody(response: Response): Promise<unknown> {
  const text = await response.text();
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export function createClient(options: ClientOptions): SvcClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const origin = new URL(baseUrl).origin;
  const transport = createTransport(options);
  const raw = createFetchClient<paths>({ baseUrl, fetch: transport });

  const call = (method: HttpMethod) =>
    (async (url: string, init?: object) => {
      const request = raw.request as (
        m: string,
        u: string,
        i?: object,
      ) => Promise<{ data?: unknown; error?: unknown; response: Response }>;
      const { data, error, response } = await request(method, url, init);
      // openapi-fetch has read the body: its JSON (or text) in `error`, undefined when it was empty.
      if (!response.ok) throw new ApiError(response, error ?? null);
      return data;
    }) as ApiMethod<never>;

  async function request(method: string, pathOrUrl: string, init: RawRequest = {}): Promise<RawResponse> {
    // A URL (a `next` link) is followed on the client's own origin: the service builds links from its
    // BASE_URL, which may name another host than the one this client was given, and the credential
    // must only go where the caller sent it.
    const target = /^https?:\/\//i.test(pathOrUrl)
      ? (() => {
          const u = new URL(pathOrUrl);
          return new URL(u.pathname + u.search, origin);
        })()
      : new URL(baseUrl + pathOrUrl);
    for (const [key, value] of Object.entries(init.query ?? {})) {
      if (value === undefined) continue;
      for (const item of Array.isArray(value) ? value : [value]) target.searchParams.append(key, String(item));
    }
    const headers = new Headers(init.headers);
    if (!headers.has('Accept')) headers.set('Accept', 'application/json');
    let body: string | undefined;
    if (init.body !== undefined) {
      body = JSON.stringify(init.body);
      if (!headers.has('Content-Type')) headers.set('Content-Type', 'application/json');
    }
    const response = await transport(new Request(target, { method: method.toUpperCase(), headers, body }));
    const data = await readBody(response);
    if (!response.ok) throw new ApiError(response, data);
    return { status: response.status, headers: response.headers, data };
  }

  const client: SvcClient = {
    GET: call('get'),
    POST: call('post'),
    PUT: call('put'),
    PATCH: call('patch'),
    DELETE: call('delete'),
    pages: ((url: ListPath, init?: object) => pagesOf(client, url, init)) as SvcClient['pages'],
    paginate: async function* (url: ListPath, init?: object) {
      for await (const page of pagesOf(client, url, init)) yield* (page as { results: unknown[] }).results;
    } as SvcClient['paginate'],
    request,
    raw,
  };
  return client;
}
