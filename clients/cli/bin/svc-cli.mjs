#!/usr/bin/env node
// The svc-cli command. In the repository (a clone, after npm install) it runs the TypeScript sources,
// which Node 24 runs as they are, with svc-client's sources resolved through the "svc-source" export
// condition; an installed package has no sources and runs the bundle that `npm pack` built (dist/).
import { existsSync } from 'node:fs';

const source = new URL('../src/main.ts', import.meta.url);
if (existsSync(source)) {
  const { registerHooks } = await import('node:module');
  registerHooks({
    resolve: (specifier, context, next) =>
      next(specifier, { ...context, conditions: [...context.conditions, 'svc-source'] }),
  });
  await (await import(source.href)).main();
} else {
  await (await import(new URL('../dist/svc-cli.mjs', import.meta.url).href)).main();
}
