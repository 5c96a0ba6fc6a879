// Validating events against the published event catalog with a stock JSON Schema validator (ajv, in
// the 2020-12 dialect OpenAPI 3.1 uses, formats checked): what a receiver importing the catalog would do.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { envelopeSchemas } from '../../src/events/index.ts';

/** A strict validator: a schema with an unknown keyword or format does not compile. */
export function schemaValidator(): Ajv2020 {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  addFormats.default(ajv);
  return ajv;
}

export const describeErrors = (validate: ValidateFunction) =>
  (validate.errors ?? []).map((error) => `${error.instancePath || '/'} ${error.message}`).join('; ');

/** Checks raw delivery bodies against the envelope schema of their `type`, as published. */
export class EventValidator {
  readonly #validators = new Map<string, ValidateFunction>();

  constructor(schemas: Record<string, object> = envelopeSchemas()) {
    const ajv = schemaValidator();
    for (const [type, schema] of Object.entries(schemas)) this.#validators.set(type, ajv.compile(schema));
  }

  /** Why the body is not a valid event of a published type; null when it is one. */
  problem(body: string): string | null {
    let event: { type?: unknown };
    try {
      event = JSON.parse(body) as { type?: unknown };
    } catch {
      return `not JSON: ${body.slice(0, 80)}`;
    }
    const type = event?.type;
    const validate = typeof type === 'string' ? this.#validators.get(type) : undefined;
    if (!validate) return `no published event type ${JSON.stringify(type)}`;
    return validate(event) ? null : `${String(type)}: ${describeErrors(validate)}`;
  }
}
