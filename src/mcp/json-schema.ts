// OpenAPI 3.0 schema objects → the JSON Schema (2020-12) of an MCP tool's inputSchema. The two are
// close; the differences that matter for the route schemas of this service are:
//  - `nullable: true` is OpenAPI's: JSON Schema says it with a type list (or a `null` branch);
//  - `$ref`s point into the document's components: a tool schema must stand alone, so they are
//    inlined (the API's request schemas are small and not recursive);
//  - `example` is OpenAPI's singular of JSON Schema's `examples`.
// Everything else (type, enum, pattern, format, bounds, properties, required, items, anyOf, …) is
// the same keyword in both and is copied as it is.

export type SchemaObject = Record<string, unknown>;

const COMPONENT_REF = /^#\/components\/schemas\/(.+)$/;

export function toJsonSchema(schema: unknown, components: Record<string, SchemaObject> = {}, depth = 0): SchemaObject {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return {};
  if (depth > 32) throw new Error('schema nesting too deep (a recursive $ref?)');
  const input = schema as SchemaObject;
  if (typeof input.$ref === 'string') {
    const name = COMPONENT_REF.exec(input.$ref)?.[1];
    const target = name === undefined ? undefined : components[name];
    if (!target) throw new Error(`unresolvable $ref ${input.$ref}`);
    return toJsonSchema(target, components, depth + 1);
  }
  const out: SchemaObject = {};
  for (const [key, value] of Object.entries(input)) {
    if (key === 'nullable' || key === '$id') continue;
    if (key === 'example') out.examples = [value];
    else if (key === 'properties' && value && typeof value === 'object') {
      out.properties = Object.fromEntries(
        Object.entries(value as SchemaObject).map(([name, sub]) => [name, toJsonSchema(sub, components, depth + 1)]),
      );
    } else if (
      (key === 'items' || key === 'additionalProperties' || key === 'not') &&
      value &&
      typeof value === 'object'
    ) {
      out[key] = toJsonSchema(value, components, depth + 1);
    } else if ((key === 'anyOf' || key === 'oneOf' || key === 'allOf') && Array.isArray(value)) {
      out[key] = value.map((sub) => toJsonSchema(sub, components, depth + 1));
    } else out[key] = value;
  }
  if (input.nullable === true) {
    if (typeof out.type === 'string') out.type = [out.type, 'null'];
    else if (Array.isArray(out.type) && !out.type.includes('null')) out.type = [...out.type, 'null'];
    else if (out.enum === undefined) return { anyOf: [out, { type: 'null' }] };
  }
  if (Array.isArray(out.enum) && input.nullable === true && !out.enum.includes(null)) out.enum = [...out.enum, null];
  return out;
}
