// The API documentation as one MCP resource (docs://api), made from the same catalog as the tools,
// so that an assistant can read what each tool does, which scope it needs and what it takes. The
// table of tools is also the generated part of docs/mcp.md (test/mcp/docs.test.ts keeps the two equal).
import type { CatalogTool } from './catalog.ts';

export const API_DOCS_URI = 'docs://api';

const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');

/** One row per tool: name, HTTP operation, scopes (any one), hints, summary. */
export function toolTable(catalog: readonly CatalogTool[]): string {
  const rows = catalog.map((tool) => {
    const { name, description, annotations } = tool.definition;
    const hints = [annotations.readOnlyHint && 'read-only', annotations.destructiveHint && 'destructive', annotations.idempotentHint && 'idempotent'].filter(Boolean).join(', ');
    return `| \`${name}\` | \`${tool.method} ${tool.path}\` | ${tool.scopes.map((s) => `\`${s}\``).join(' or ')} | ${hints || '—'} | ${cell(description)} |`;
  });
  return ['| tool | API operation | scope (any one) | hints | what it does |', '|---|---|---|---|---|', ...rows].join('\n');
}

function argumentsOf(tool: CatalogTool): string[] {
  const schema = tool.definition.inputSchema;
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties).map(([name, property]) => {
    const type = Array.isArray(property.type) ? property.type.join(' | ') : String(property.type ?? (property.enum ? 'enum' : 'any'));
    const values = Array.isArray(property.enum) ? ` (${property.enum.map((v) => JSON.stringify(v)).join(', ')})` : '';
    const about = typeof property.description === 'string' ? `: ${property.description}` : '';
    return `- \`${name}\` ${type}${values}${required.has(name) ? ', required' : ''}${about}`;
  });
}

/** The whole docs://api text (Markdown). */
export function apiDocument(catalog: readonly CatalogTool[], intro: string): string {
  const sections = catalog.map((tool) => {
    const args = argumentsOf(tool);
    return [
      `### ${tool.definition.name}`,
      '',
      `${tool.definition.description}. \`${tool.method} ${tool.path}\`, scope ${tool.scopes.map((s) => `\`${s}\``).join(' or ')}.`,
      '',
      ...(args.length ? ['Arguments:', '', ...args] : ['No arguments.']),
    ].join('\n');
  });
  return [
    '# The service API, as MCP tools',
    '',
    intro,
    '',
    'Each tool runs one operation of the REST API with your credential: the same checks, roles and limits. ' +
      'Arguments are the operation\'s path and query parameters and its JSON body\'s fields. The result is the ' +
      'API\'s JSON answer; an API error comes back as a tool error carrying its problem details (`status`, `detail`, ' +
      'and for invalid input `errors`, one per field). Lists are paginated: pass `page` (or `cursor`) from the `next` link.',
    '',
    'A tool needs one of the scopes listed for it; you see only the tools your connection may call. Teams you ' +
      'are not a member of are not found (404), and owner- or admin-only operations answer 403 to a member.',
    '',
    '## Tools',
    '',
    toolTable(catalog),
    '',
    ...sections.flatMap((section) => [section, '']),
  ].join('\n');
}
