// `npm run build`, after the type-check: bundles src/ and the packages the server loads at start into
// dist/ with esbuild. Node spends most of a start resolving, reading and compiling modules one file at
// a time (Kysely and TypeBox are ~250 files each); a bundle is a few files, so `svc serve` starts in
// about half the time and with less memory (docs/architecture.md, "Lazy loading and the bundle").
// Each dynamic import() becomes a chunk of its own, so what loads on first use still does.
import { build } from 'esbuild';
import fs from 'node:fs';
import { isBuiltin } from 'node:module';

// Left to node_modules, loaded as they are: the packages loaded only on first use (their own dynamic
// imports or createRequire calls, which a bundle cannot follow anyway). pino is bundled (6 MiB less
// at start than loading it from node_modules): the service logs to stdout (util/logger.ts), as its
// transports, which start worker threads from files beside pino's own, would not work from a bundle.
const external = [
  'oidc-provider',
  'jose',
  'nodemailer',
  'qrcode',
  'undici',
  'pg',
  'ioredis',
  '@fastify/swagger',
  '@fastify/swagger-ui',
  // Only with SERVICE_METRICS_TOKEN or SERVICE_WORKER_METRICS_PORT (src/metrics/).
  '@prometheus-io/client',
  // The MCP SDK, loaded by the first /mcp request (src/mcp/server.ts).
  '@modelcontextprotocol/server',
  '@modelcontextprotocol/node',
  // Fastify require()s these inside functions, so esbuild would bundle them, but the service never
  // reaches those calls while it starts: the schema compilers (with Ajv and fast-json-stringify, a
  // third of the bundle's bytes) are loaded from node_modules by src/http/lazy-compilers.ts on a
  // route's first request, and light-my-request only by `app.inject()` (an MCP tool call, tests).
  // Bundled, V8 would still parse their ~470 KB on every start.
  '@fastify/ajv-compiler',
  '@fastify/fast-json-stringify-compiler',
  'light-my-request',
];

// Node's own modules, when the bundle imports them with `import`, are read with
// process.getBuiltinModule() instead. An `import` of a built-in makes Node build an ES module facade
// for it, and the facade reads every export once: node:http's lazy `WebSocket`/`MessageEvent`
// getters then load Node's internal copy of undici and node:http2, 55-70 ms of a 440 ms start on a
// slow machine, for classes the service never uses. process.getBuiltinModule returns the module
// object that require() gives, without the facade. The stand-in is an ES module that exports the
// object and its plain values (the names come from this Node, which is the one that runs the build):
// a CommonJS stand-in would cost a copy of the whole object per importing file (esbuild's __toESM).
// A lazy getter cannot be exported without being run, so a named import of one (`promises` from
// node:fs) fails the build; `fs.promises` works. Sources keep plain imports, and get the same
// objects under `npm start`, which runs them unbundled.
function builtinStandIn(id) {
  const plain = Object.entries(Object.getOwnPropertyDescriptors(process.getBuiltinModule(id)))
    .filter(([name, descriptor]) => 'value' in descriptor && name !== 'default')
    .map(([name]) => name);
  return [
    `const m = process.getBuiltinModule(${JSON.stringify(id)});`,
    'export default m;',
    ...plain.map((name, i) => `const v${i} = m[${JSON.stringify(name)}];`),
    `export { ${plain.map((name, i) => `v${i} as ${JSON.stringify(name)}`).join(', ')} };`,
  ].join('\n');
}
const builtinsWithoutFacade = {
  name: 'builtins-without-esm-facade',
  setup(b) {
    b.onResolve({ filter: /^[a-z0-9_:/]+$/ }, (args) =>
      args.kind === 'import-statement' && isBuiltin(args.path)
        ? { path: args.path, namespace: 'node-builtin' }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'node-builtin' }, (args) => ({
      contents: builtinStandIn(args.path),
      loader: 'js',
    }));
  },
};

// `node scripts/bundle.mjs [outdir]`: dist/ unless told (test/build/bundle.test.ts builds a copy of its
// own, inside the project so that the packages left to node_modules resolve as they do from dist/).
const outdir = process.argv[2] ?? 'dist';
fs.rmSync(outdir, { recursive: true, force: true });
await build({
  entryPoints: ['src/main.ts'],
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node24',
  external,
  // Whitespace and syntax only: identifiers keep their names (stack traces, error and class names).
  // BUNDLE_READABLE=1 keeps the line breaks, so that a CPU profile of the build names its lines.
  minifyWhitespace: process.env.BUNDLE_READABLE !== '1',
  minifySyntax: true,
  sourcemap: true,
  // CommonJS packages inside an ES module bundle still call require() (for Node's own modules).
  banner: { js: "const require = process.getBuiltinModule('node:module').createRequire(import.meta.url);" },
  plugins: [builtinsWithoutFacade],
  logLevel: 'warning',
});
