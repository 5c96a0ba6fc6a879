// `svc-cli api METHOD PATH`: any request with the stored credentials, like `gh api`; prints the API's
// JSON as it is. Retries, the Idempotency-Key and refreshing are the typed client's, as for every
// other command.
import fs from 'node:fs';
import { list, str, type Command } from '../command.ts';
import { UsageError } from '../failures.ts';
import { printJson } from '../io.ts';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'];

export const apiCommand: Command = {
  path: ['api'],
  usage: 'METHOD PATH [-f key=value]… [--input FILE] [--paginate]',
  summary: 'Send any request to the API and print its JSON answer',
  details: [
    'PATH starts with /, e.g. /api/v1/me/. Fields (-f) are query parameters for GET and DELETE, and the',
    'members of a JSON object body otherwise (strings); --input sends a JSON file (- for standard input).',
    'With --paginate, a GET of a list follows every `next` link and prints all items as one JSON array.',
  ],
  options: {
    field: { type: 'string', short: 'f', multiple: true, help: 'a key=value field; repeat for more' },
    input: { type: 'string', help: 'a FILE whose JSON is the body (- for standard input)' },
    paginate: { type: 'boolean', help: 'GET every page of a list; print the items as one array' },
  },
  args: { min: 2, max: 2 },
  async run(ctx, args) {
    const method = args.positionals[0].toUpperCase();
    const path = args.positionals[1];
    if (!METHODS.includes(method))
      throw new UsageError(`METHOD must be one of ${METHODS.join(', ')}, not "${args.positionals[0]}"`);
    if (!path.startsWith('/')) throw new UsageError(`PATH must start with /, e.g. /api/v1/me/ (got "${path}")`);
    const fields: Record<string, string> = {};
    for (const field of list(args, 'field')) {
      const at = field.indexOf('=');
      if (at < 1) throw new UsageError(`-f takes key=value, not "${field}"`);
      fields[field.slice(0, at)] = field.slice(at + 1);
    }
    const inQuery = method === 'GET' || method === 'DELETE' || method === 'HEAD';
    const input = str(args, 'input');
    if (input !== undefined && (inQuery || Object.keys(fields).length > 0)) {
      throw new UsageError(
        inQuery ? `--input sends a body, which ${method} does not take` : 'give either -f fields or --input, not both',
      );
    }
    if (args.values.paginate && method !== 'GET') throw new UsageError('--paginate is for GET');
    let body: unknown;
    if (input !== undefined) {
      const text = input === '-' ? await ctx.io.readStdin() : readFile(input);
      try {
        body = JSON.parse(text);
      } catch {
        throw new UsageError(`--input ${input} is not JSON`);
      }
    } else if (!inQuery && Object.keys(fields).length > 0) {
      body = fields;
    }
    const query = inQuery ? fields : undefined;
    const { client } = ctx.session();
    const answer = await client.request(method, path, { query, body });
    if (!args.values.paginate) {
      if (answer.data !== null) printJson(ctx.io, answer.data);
      return;
    }
    const items: unknown[] = [];
    let page = answer.data as { results?: unknown[]; next?: string | null };
    if (!Array.isArray(page?.results))
      throw new UsageError(`${path} does not answer a list (no "results"): drop --paginate`);
    for (;;) {
      items.push(...(page.results ?? []));
      if (!page.next) break;
      page = (await client.request('GET', page.next)).data as typeof page;
    }
    printJson(ctx.io, items);
  },
};

function readFile(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`--input ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}
