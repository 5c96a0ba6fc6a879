// A tool call is the API request of its operation, run through the same Fastify route in this
// process (app.inject): the same hooks, validation, scope and role checks, events, idempotency and
// limits as the REST call, and one implementation of each operation. The arguments become the path,
// query, headers and JSON body; the answer becomes the tool result: the API's JSON as structured
// content and as text, and an API error (a problem details document) a tool error carrying it,
// never a protocol error. The request carries the MCP request's id (X-Request-ID), so both log
// lines of a tool call share it, and its client address.
import type { FastifyInstance } from 'fastify';
import { STATUS_CODES } from 'node:http';
import type { FieldError } from '../http/problem.ts';
import type { AuthenticatedIdentity } from '../http/identity.ts';
import type { CatalogTool } from './catalog.ts';
import type { InternalCredentials } from './internal-credentials.ts';

export interface ToolResult {
  [key: string]: unknown;
  content: { type: 'text'; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** What a tool call needs from the MCP request it belongs to. */
export interface CallContext {
  identity: AuthenticatedIdentity;
  requestId: string;
  address: string;
}

interface Request {
  url: string;
  headers: Record<string, string>;
  payload?: string;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  !!value && typeof value === 'object' && !Array.isArray(value);

export class ToolRunner {
  readonly #app: FastifyInstance;
  readonly #credentials: InternalCredentials;

  constructor(app: FastifyInstance, credentials: InternalCredentials) {
    this.#app = app;
    this.#credentials = credentials;
  }

  async call(tool: CatalogTool, args: unknown, context: CallContext): Promise<ToolResult> {
    const built = buildRequest(tool, args ?? {});
    if ('errors' in built)
      return problemResult(400, 'The tool arguments are invalid.', context.requestId, built.errors);
    const token = this.#credentials.issue(context.identity);
    try {
      const response = await this.#app.inject({
        method: tool.method as 'GET',
        url: built.url,
        headers: {
          ...built.headers,
          authorization: `Bearer ${token}`,
          'x-request-id': context.requestId,
          accept: 'application/json',
        },
        ...(built.payload !== undefined ? { payload: built.payload } : {}),
        remoteAddress: context.address,
      });
      return resultOf(response.statusCode, response.body);
    } finally {
      this.#credentials.revoke(token);
    }
  }
}

/** The API request for `args`, or the argument errors (each named by its argument). */
export function buildRequest(tool: CatalogTool, args: unknown): Request | { errors: FieldError[] } {
  if (!isPlainObject(args)) return { errors: [{ field: 'arguments', message: 'The arguments must be an object.' }] };
  const errors: FieldError[] = [];
  const used = new Set<string>();
  let path = tool.path;
  const query = new URLSearchParams();
  const headers: Record<string, string> = {};
  for (const parameter of tool.parameters) {
    const value = args[parameter.argument];
    used.add(parameter.argument);
    if (value === undefined || value === null) {
      if (parameter.in === 'path') errors.push({ field: parameter.argument, message: 'This field is required.' });
      continue;
    }
    const values = Array.isArray(value) && parameter.in === 'query' ? value : [value];
    if (!values.every((item) => typeof item === 'string' || typeof item === 'number' || typeof item === 'boolean')) {
      errors.push({ field: parameter.argument, message: 'Must be a string, number or boolean.' });
      continue;
    }
    const text = values.map(String);
    if (parameter.in === 'path') path = path.replace(`{${parameter.wire}}`, encodeURIComponent(text[0]));
    else if (parameter.in === 'query') for (const item of text) query.append(parameter.wire, item);
    else headers[parameter.wire] = text[0];
  }

  let payload: unknown;
  if (tool.body === 'nested') {
    used.add('body');
    payload = args.body ?? (tool.bodyRequired ? {} : undefined);
  } else if (tool.body === 'fields') {
    const fields: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(args)) if (!used.has(name)) fields[name] = value;
    for (const name of Object.keys(fields)) used.add(name);
    payload = Object.keys(fields).length > 0 || tool.bodyRequired ? fields : undefined;
  }
  // Unknown arguments of an operation without a body; a body's unknown fields are the route's to refuse.
  for (const name of Object.keys(args)) if (!used.has(name)) errors.push({ field: name, message: 'Unknown argument.' });
  if (errors.length) return { errors };

  const search = query.size ? `?${query}` : '';
  if (payload === undefined) return { url: path + search, headers };
  return {
    url: path + search,
    headers: { ...headers, 'content-type': 'application/json' },
    payload: JSON.stringify(payload),
  };
}

/** The tool result of an API answer: 2xx is the result, anything else a tool error with the problem. */
export function resultOf(status: number, body: string): ToolResult {
  let json: unknown = undefined;
  if (body) {
    try {
      json = JSON.parse(body);
    } catch {
      json = undefined;
    }
  }
  const text = body || `${status} ${STATUS_CODES[status] ?? ''}`.trim();
  const result: ToolResult = { content: [{ type: 'text', text }] };
  if (isPlainObject(json)) result.structuredContent = json;
  if (status >= 400) result.isError = true;
  return result;
}

function problemResult(status: number, detail: string, requestId: string, errors: FieldError[]): ToolResult {
  const problem = {
    type: 'about:blank',
    title: STATUS_CODES[status] ?? 'Error',
    status,
    detail,
    request_id: requestId,
    errors,
  };
  return { content: [{ type: 'text', text: JSON.stringify(problem) }], structuredContent: problem, isError: true };
}
