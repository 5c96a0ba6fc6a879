// The bundle's chunks (dist/*.js, scripts/bundle.mjs) import one another by relative name, about 180
// import statements on the way to `svc serve` listening. Node's default resolver handles each one
// alone: the specifier made a file URL, the URL a path, the path through realpath and back to a URL,
// two path normalisations per statement. Those run Node's path normaliser often enough for V8 to
// compile it with TurboFan before the server listens, which brings the optimising compiler's code
// and zones into memory: 5-6 MiB of RSS at listen, and the compilation's time on a one-core start
// (docs/performance.md, "Startup and RSS"). A chunk of this bundle names a sibling file that the
// build wrote, so its URL is the specifier against the folder: this resolve hook
// (module.registerHooks, in-thread and synchronous) answers those directly and passes every other
// specifier (packages, Node's modules, files elsewhere) to Node's resolver unchanged. The API is
// marked "active development" in Node 24; a change to it fails test/build/bundle.test.ts, which
// starts the built bundle, before it reaches a deployment.
import { registerHooks } from 'node:module';

/**
 * The URL of a sibling chunk (`./name.js`, imported from a file directly inside `folder`), or null
 * for anything Node's resolver must decide. `folder` is a file URL ending in `/`.
 */
export function siblingChunkUrl(specifier: string, parentUrl: string | undefined, folder: string): string | null {
  if (parentUrl === undefined || !parentUrl.startsWith(folder) || parentUrl.includes('/', folder.length)) return null;
  if (!specifier.startsWith('./') || !specifier.endsWith('.js')) return null;
  const name = specifier.slice(2);
  // A plain file name only: no folder, no `..`, nothing a URL would read as a query or fragment.
  if (!/^[\w.-]+$/.test(name) || name.startsWith('.')) return null;
  return folder + name;
}

/** Called by the bundle's entry (dist/main.js) with its own URL, before it loads the command's chunks. */
export function resolveSiblingChunksDirectly(entryUrl: string): void {
  const folder = entryUrl.slice(0, entryUrl.lastIndexOf('/') + 1);
  registerHooks({
    resolve(specifier, context, nextResolve) {
      const url = siblingChunkUrl(specifier, context.parentURL, folder);
      return url === null ? nextResolve(specifier, context) : { url, format: 'module', shortCircuit: true };
    },
  });
}
