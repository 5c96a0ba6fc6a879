// Reading the service's OpenAPI document in tests: the operations it lists, and values its schemas
// accept, so that a test covers every operation without a hand-kept list.
import assert from 'node:assert/strict';

export type Schema = {
  type?: string | string[];
  nullable?: boolean;
  enum?: unknown[];
  example?: unknown;
  pattern?: string;
  format?: string;
  minLength?: number;
  minimum?: number;
  minItems?: number;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  $ref?: string;
};
export type Parameter = { name: string; in: string; schema?: Schema };
export type Operation = {
  operationId: string;
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  security?: Record<string, string[]>[];
};
export type Document = {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas?: Record<string, Schema> };
};

/** The JSON types a schema accepts (an "integer" schema accepts only the integral numbers). */
export function acceptedTypes(schema: Schema, doc: Document): Set<string> {
  schema = resolve(schema, doc);
  const branches = schema.anyOf ?? schema.oneOf;
  const types = new Set<string>();
  if (branches) for (const branch of branches) for (const type of acceptedTypes(branch, doc)) types.add(type);
  if (schema.type) for (const type of [schema.type].flat()) types.add(type);
  if (schema.enum) for (const value of schema.enum) types.add(jsonType(value));
  if (schema.nullable) types.add('null');
  if (types.has('number')) types.add('integer');
  return types;
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

export function resolve(schema: Schema, doc: Document): Schema {
  if (!schema.$ref) return schema;
  const name = schema.$ref.replace('#/components/schemas/', '');
  const target = doc.components.schemas?.[name];
  assert.ok(target, `unresolved ${schema.$ref}`);
  return resolve(target, doc);
}

/** A value the schema accepts: its example, else one built from its keywords. */
export function validValue(schema: Schema, doc: Document, where: string): unknown {
  schema = resolve(schema, doc);
  if (schema.example !== undefined) return schema.example;
  if (schema.enum) return schema.enum[0];
  const onlyNull = (candidate: Schema) => [...acceptedTypes(candidate, doc)].every((type) => type === 'null');
  const branch = (schema.anyOf ?? schema.oneOf)?.find((candidate) => !onlyNull(candidate));
  if (branch) return validValue(branch, doc, where);
  const type = [schema.type ?? 'object'].flat().find((name) => name !== 'null');
  switch (type) {
    case 'string': {
      const formats: Record<string, string> = {
        email: 'a@example.com',
        uuid: '00000000-0000-4000-8000-000000000000',
        'date-time': '2030-01-01T00:00:00Z',
        uri: 'https://example.com/',
      };
      const value = (schema.format && formats[schema.format]) ?? 'x'.repeat(Math.max(1, schema.minLength ?? 1));
      // A pattern cannot be satisfied generically: such a field needs an `example` in its schema.
      if (schema.pattern) assert.match(value, new RegExp(schema.pattern), `${where}: give the schema an example`);
      return value;
    }
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    case 'boolean':
      return true;
    case 'array':
      return Array.from({ length: Math.max(1, schema.minItems ?? 1) }, () =>
        validValue(schema.items ?? {}, doc, `${where}[]`),
      );
    default: {
      const value: Record<string, unknown> = {};
      for (const name of schema.required ?? [])
        value[name] = validValue(schema.properties![name], doc, `${where}.${name}`);
      return value;
    }
  }
}

/** Every operation of the document, with its path and method. */
export function operationsOf(doc: Document): { path: string; method: string; operation: Operation }[] {
  return Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({ path, method, operation })),
  );
}
