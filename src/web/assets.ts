// Non-code files that ship with the source (templates, the stylesheet, the password list). They are
// read from src/ whether the code runs from src/ or from the bundle in dist/ (scripts/bundle.mjs),
// where no module sits beside its files any more: paths are relative to src/.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package root: the nearest folder above this module (src/web/ or dist/) with a package.json. */
function packageRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!fs.existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`no package.json above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
  return dir;
}

/** src/ of this package. */
export const SOURCE_ROOT = path.join(packageRoot(), 'src');

/** The absolute path of a file shipped in src/, e.g. assetPath('web/app.css'). */
export function assetPath(relativeToSrc: string): string {
  return path.join(SOURCE_ROOT, relativeToSrc);
}
