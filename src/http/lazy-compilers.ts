// Route schemas compiled on first use instead of before listening. Fastify compiles every route's
// validators (Ajv) and response serialisers (fast-json-stringify) while the app starts: a large
// share of the start, for routes most processes never serve. These compiler factories hand Fastify
// a stand-in for each schema that compiles it with Fastify's own default compilers (same options,
// same shared schemas) on the route's first request, and the compilers' modules are loaded then
// too. Validation errors, coercion, defaults and serialisation are those of the default compilers
// (request bodies may get Ajv options of their own: app.ts compiles them without coercion);
// the OpenAPI document reads the route schemas, not the compiled functions. docs/architecture.md,
// "Lazy loading".
import { createRequire } from 'node:module';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';

declare module 'fastify' {
  interface FastifyInstance {
    /** The app's schema compilations not run yet (for compileDeferredSchemas). */
    deferredSchemas: Set<() => unknown> | null;
  }
}

type CompilersFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;
/** What Fastify passes a compiler for one part of one route (FastifyRouteSchemaDef). */
interface RouteSchema {
  schema: unknown;
  method: string;
  url: string;
  httpPart?: string;
  httpStatus?: string;
  contentType?: string;
}
type Validator = ((data: unknown, context?: unknown) => unknown) & { errors?: unknown };
type Serializer = (data: unknown) => string;
type ValidatorBuilder = (externalSchemas: unknown, options: unknown) => (route: RouteSchema) => Validator;
type SerializerBuilder = (externalSchemas: unknown, options: unknown) => (route: RouteSchema) => Serializer;

// Fastify's default compilers, resolved from Fastify itself so they are exactly the versions it
// would use; required only when the first schema is compiled.
const fastifyRequire = createRequire(createRequire(import.meta.url).resolve('fastify'));

export interface LazyCompilers {
  compilersFactory: CompilersFactory;
  /** Ties the deferred compilations to the app (an instance decoration), for compileDeferredSchemas. */
  attach(app: FastifyInstance): void;
}

export interface LazyCompilerOptions {
  /**
   * Ajv options that replace the app's for request bodies only (Fastify's `ajv.customOptions`
   * stay for query strings, path parameters and headers).
   */
  bodyAjvOptions?: Record<string, unknown>;
}

export function lazyCompilers({ bodyAjvOptions }: LazyCompilerOptions = {}): LazyCompilers {
  // One of each per app, as Fastify makes them (each pools its compilers by shared schemas and options).
  let defaultValidatorBuilder: ValidatorBuilder | null = null;
  let defaultSerializerBuilder: SerializerBuilder | null = null;
  const deferred = new Set<() => unknown>();
  const later = <T>(compile: () => T) => {
    let compiled: T | null = null;
    const get = () => {
      if (compiled === null) {
        compiled = compile();
        deferred.delete(get);
      }
      return compiled;
    };
    deferred.add(get);
    return get;
  };

  const buildValidator: ValidatorBuilder = (externalSchemas, options) => {
    const compilers = new Map<'body' | 'other', ReturnType<ValidatorBuilder>>();
    const real = (part: 'body' | 'other') => {
      defaultValidatorBuilder ??= (fastifyRequire('@fastify/ajv-compiler') as () => ValidatorBuilder)();
      let compiler = compilers.get(part);
      if (!compiler) {
        const { customOptions } = options as { customOptions?: Record<string, unknown> };
        const partOptions =
          part === 'body' && bodyAjvOptions
            ? { ...(options as object), customOptions: { ...customOptions, ...bodyAjvOptions } }
            : options;
        compiler = defaultValidatorBuilder(externalSchemas, partOptions);
        compilers.set(part, compiler);
      }
      return compiler;
    };
    return (route) => {
      // Fastify lower-cases a header schema's names for its default compiler but passes it as it is
      // to a custom one (as these are): the names must be written in lower case.
      if (route.httpPart === 'headers') assertLowerCaseHeaderNames(route.schema, `${route.method} ${route.url}`);
      const part = route.httpPart === 'body' ? 'body' : 'other';
      const validator = later(() => real(part)(route) as Validator);
      const validate: Validator = function (data, context) {
        const fn = validator();
        const result = fn(data, context);
        validate.errors = fn.errors;
        return result;
      };
      validate.errors = null;
      // Ajv's functions carry `schemaEnv`; Fastify then passes the parent object, which lets Ajv
      // coerce or default the root value itself (the first request must get that too).
      (validate as unknown as { schemaEnv: true }).schemaEnv = true;
      return validate;
    };
  };

  const buildSerializer: SerializerBuilder = (externalSchemas, options) => {
    let compiler: ReturnType<SerializerBuilder> | null = null;
    const real = () => {
      defaultSerializerBuilder ??= (
        fastifyRequire('@fastify/fast-json-stringify-compiler') as () => SerializerBuilder
      )();
      compiler ??= defaultSerializerBuilder(externalSchemas, options);
      return compiler;
    };
    return (route) => {
      const serializer = later(() => real()(route) as Serializer);
      return (data: unknown) => serializer()(data);
    };
  };

  return {
    // The library types these factories as unions of Ajv's and JTD's; these are the JSON Schema ones.
    compilersFactory: { buildValidator, buildSerializer } as unknown as CompilersFactory,
    attach: (app) => app.decorate('deferredSchemas', deferred),
  };
}

/**
 * Compiles every schema of the app not compiled yet (as the default compilers would have at
 * start), so that a test finds a broken schema without requesting every route.
 */
export function compileDeferredSchemas(app: FastifyInstance): number {
  const deferred = app.deferredSchemas;
  if (!deferred) return 0;
  let count = 0;
  for (const compile of [...deferred]) {
    compile();
    count++;
  }
  return count;
}

function assertLowerCaseHeaderNames(schema: unknown, route: string) {
  const { properties, required } = (schema ?? {}) as { properties?: Record<string, unknown>; required?: unknown };
  const names = [...Object.keys(properties ?? {}), ...(Array.isArray(required) ? required : [])];
  const upper = names.find((name) => typeof name === 'string' && name !== name.toLowerCase());
  if (upper !== undefined) throw new Error(`${route}: header schema names must be lower case ("${upper}")`);
}
