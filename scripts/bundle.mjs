// `npm run build`, after the type-check: bundles src/ and the packages the server loads at start into
// dist/ with esbuild. Node spends most of a start resolving, reading and compiling modules one file at
// a time (Kysely and TypeBox are ~250 files each); a bundle is a few files, so `svc serve` starts in
// about half the time and with less memory (docs/architecture.md, "Lazy loading and the bundle").
// Each dynamic import() becomes a chunk of its own, so what loads on first use still does.
import { build } from 'esbuild';
import fs from 'node:fs';

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
];

fs.rmSync('dist', { recursive: true, force: true });
await build({
  entryPoints: ['src/main.ts'],
  outdir: 'dist',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node24',
  external,
  // Whitespace and syntax only: identifiers keep their names (stack traces, error and class names).
  minifyWhitespace: true,
  minifySyntax: true,
  sourcemap: true,
  // CommonJS packages inside an ES module bundle still call require() (for Node's own modules).
  banner: { js: "import { createRequire as __svcCreateRequire } from 'node:module'; const require = __svcCreateRequire(import.meta.url);" },
  logLevel: 'warning',
});
