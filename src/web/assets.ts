// Non-code files that ship beside the source (templates, the stylesheet, the password list). The
// compiled dist/ holds only JavaScript, so a file missing beside a compiled module is read from the
// same place under src/.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export function assetPath(moduleUrl: string, relative: string): string {
  const beside = fileURLToPath(new URL(relative, moduleUrl));
  if (fs.existsSync(beside)) return beside;
  const marker = `${path.sep}dist${path.sep}`;
  const at = beside.lastIndexOf(marker);
  return at < 0 ? beside : `${beside.slice(0, at)}${path.sep}src${path.sep}${beside.slice(at + marker.length)}`;
}
