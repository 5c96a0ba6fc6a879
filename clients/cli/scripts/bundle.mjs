// `npm run build` (and `npm pack`, through prepack): bundles svc-cli, the typed client and
// openapi-fetch into one file, dist/svc-cli.mjs, with esbuild. The installed command then needs no
// dependency at all (like a single binary), starts by reading one file, and runs on Node 22 and
// later without type stripping. svc-client is taken from its TypeScript sources (the "svc-source"
// export condition), so nothing has to be built before.
import { build } from 'esbuild';
import fs from 'node:fs';

fs.rmSync('dist', { recursive: true, force: true });
await build({
  entryPoints: ['src/main.ts'],
  outfile: 'dist/svc-cli.mjs',
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node22',
  conditions: ['svc-source'],
  minifySyntax: true,
  legalComments: 'inline',
  logLevel: 'warning',
});
