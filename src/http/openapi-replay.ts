// The OpenAPI document without @fastify/swagger in the process until it is first asked for. When
// the document is only read by the MCP endpoint (its tools are made from it) and not served, the
// plugin (with its YAML and JSON-schema-resolver dependencies) would cost every start a sixth of
// its time for a document that a process serving only the API never builds. So the app records
// what the plugin would have seen (every route's options and the shared schemas of every plugin
// instance), and the first request for the document replays them into a throwaway Fastify
// instance with the plugin registered, with the same options, and keeps the result. Replaying
// through Fastify's public API (addSchema, route, ready) instead of calling the plugin's internals
// keeps the document the plugin's own: test/http/openapi-replay.test.ts checks that it is
// identical to the one the plugin builds on the app itself.
import Fastify, { type FastifyInstance, type RouteOptions } from 'fastify';
import type { SwaggerOptions } from '@fastify/swagger';

export type DocumentSource = () => Promise<unknown>;

/** Starts recording on `app` (before its routes are added); the source builds the document once, after `app` is ready. */
export function recordForOpenApi(app: FastifyInstance, options: SwaggerOptions): DocumentSource {
  const routes: RouteOptions[] = [];
  const instances: FastifyInstance[] = [app];
  app.addHook('onRoute', (route) => {
    routes.push(route);
  });
  app.addHook('onRegister', (instance) => {
    instances.push(instance);
  });
  let document: Promise<unknown> | null = null;
  return () =>
    (document ??= replay(routes, instances, options).catch((error: unknown) => {
      document = null;
      throw error;
    }));
}

async function replay(routes: RouteOptions[], instances: FastifyInstance[], options: SwaggerOptions) {
  const { default: swagger } = await import('@fastify/swagger');
  const stage = Fastify();
  // The stage never serves a request: its schemas are read, never compiled.
  stage.setValidatorCompiler(() => () => true);
  stage.setSerializerCompiler(() => (data) => JSON.stringify(data));
  const schemas = new Map<string, unknown>();
  for (const instance of instances)
    for (const [id, schema] of Object.entries(instance.getSchemas())) schemas.set(id, schema);
  for (const schema of schemas.values()) stage.addSchema(schema);
  await stage.register(swagger, options);
  const handler = () => null;
  for (const { method, url, schema, config } of routes)
    stage.route({ method, url, schema, config, exposeHeadRoute: false, handler });
  await stage.ready();
  const document = stage.swagger();
  await stage.close();
  return document;
}
