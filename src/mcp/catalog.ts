// The MCP tools, made from the OpenAPI document (http/openapi.ts), one per operation, never written
// one by one: a route added to the API with an operationId and scopes is a tool without more work.
//  - name: the operationId (stable and snake_case, test/http/operation-ids.test.ts); description:
//    the summary; input schema: the path, query and header parameters (header names with `_` for
//    `-`: `idempotency_key`) and the JSON body's fields beside them (or under `body` when a field
//    name would collide with a parameter's);
//  - annotations: readOnlyHint for GET; destructiveHint for DELETE and for role changes (a PATCH or
//    PUT whose body sets a `role`: a demotion cannot be undone by the one demoted); idempotentHint for
//    PUT and DELETE;
//  - the scopes of the operation's oauth2 alternatives, any one of which suffices (as on the API).
// Left out: operations that name no scope (the JWT credential exchanges: for machines, not for a
// person's assistant), and the webhook operations when SERVICE_WEBHOOKS_ENABLED is off. Endpoints
// outside the document (OAuth, the mail-provider intake, pages) are never tools.
import { toJsonSchema, type SchemaObject } from './json-schema.ts';

export interface ToolDefinition {
  name: string;
  title: string;
  description: string;
  inputSchema: {
    type: 'object';
    properties: Record<string, SchemaObject>;
    required?: string[];
    additionalProperties?: boolean;
  };
  annotations: { readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean };
}

export interface ToolParameter {
  /** The argument's name in the tool's input. */
  argument: string;
  /** Where and under which name the API takes it. */
  in: 'path' | 'query' | 'header';
  wire: string;
}

export interface CatalogTool {
  definition: ToolDefinition;
  method: string;
  /** The path template, e.g. /api/v1/teams/{id}/. */
  path: string;
  /** Any one of these suffices (the operation's oauth2 alternatives). */
  scopes: readonly string[];
  parameters: readonly ToolParameter[];
  /** 'fields': the body's fields are top-level arguments; 'nested': the body is the `body` argument. */
  body: 'none' | 'fields' | 'nested';
  bodyRequired: boolean;
  tag: string | null;
}

interface Operation {
  operationId?: string;
  summary?: string;
  tags?: string[];
  parameters?: { name: string; in: string; required?: boolean; description?: string; schema?: SchemaObject }[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: SchemaObject }> };
  security?: Record<string, string[]>[];
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, SchemaObject> };
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

export interface CatalogOptions {
  webhooksEnabled: boolean;
}

export function buildCatalog(document: OpenApiDocument, options: CatalogOptions): CatalogTool[] {
  const components = document.components?.schemas ?? {};
  const tools: CatalogTool[] = [];
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const operation = operations[method];
      if (!operation?.operationId) continue;
      const scopes = (operation.security ?? []).flatMap((requirement) => requirement.oauth2 ?? []);
      if (scopes.length === 0) continue;
      const tag = operation.tags?.[0] ?? null;
      if (tag === 'webhooks' && !options.webhooksEnabled) continue;
      tools.push(toolFor(method.toUpperCase(), path, operation, [...new Set(scopes)], components, tag));
    }
  }
  return tools.sort((a, b) => a.definition.name.localeCompare(b.definition.name));
}

function toolFor(
  method: string,
  path: string,
  operation: Operation,
  scopes: string[],
  components: Record<string, SchemaObject>,
  tag: string | null,
): CatalogTool {
  const properties: Record<string, SchemaObject> = {};
  const required: string[] = [];
  const parameters: ToolParameter[] = [];
  for (const parameter of operation.parameters ?? []) {
    if (parameter.in !== 'path' && parameter.in !== 'query' && parameter.in !== 'header') continue;
    const argument = parameter.name.toLowerCase().replaceAll('-', '_');
    const schema = toJsonSchema(parameter.schema ?? { type: 'string' }, components);
    if (parameter.description && schema.description === undefined) schema.description = parameter.description;
    properties[argument] = schema;
    if (parameter.required || parameter.in === 'path') required.push(argument);
    parameters.push({ argument, in: parameter.in, wire: parameter.name });
  }

  const bodySchema = operation.requestBody?.content?.['application/json']?.schema;
  const bodyRequired = operation.requestBody?.required === true;
  let body: CatalogTool['body'] = 'none';
  let closed = true;
  if (bodySchema) {
    const converted = toJsonSchema(bodySchema, components);
    const fields = (converted.properties ?? {}) as Record<string, SchemaObject>;
    const collides = Object.keys(fields).some((name) => name in properties || name === 'body');
    if (converted.properties && !collides) {
      body = 'fields';
      Object.assign(properties, fields);
      required.push(...((converted.required as string[] | undefined) ?? []));
      closed = converted.additionalProperties === false;
    } else {
      body = 'nested';
      properties.body = converted;
      if (bodyRequired) required.push('body');
    }
  }

  // A role change: an update (not a creation) whose body sets a `role`.
  const changesRole = (method === 'PATCH' || method === 'PUT') && body === 'fields' && 'role' in properties;
  const definition: ToolDefinition = {
    name: operation.operationId!,
    title: titleOf(operation.operationId!),
    description: operation.summary ?? `${method} ${path}`,
    inputSchema: {
      type: 'object',
      properties,
      ...(required.length ? { required } : {}),
      ...(closed ? { additionalProperties: false } : {}),
    },
    annotations: {
      readOnlyHint: method === 'GET',
      destructiveHint: method === 'DELETE' || changesRole,
      idempotentHint: method === 'PUT' || method === 'DELETE',
    },
  };
  return { definition, method, path, scopes, parameters, body, bodyRequired, tag };
}

/** list_members → "List members". */
function titleOf(operationId: string): string {
  const words = operationId.split('_').join(' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}
