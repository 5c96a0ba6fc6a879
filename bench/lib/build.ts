// The build the benchmarks measure: dist/ (npm run build), rebuilt when a file in src/ is newer than
// dist/main.js, so that a figure never describes stale code.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from './processes.ts';

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) newest = Math.max(newest, fs.statSync(path.join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

/** Builds dist/ when it is missing or older than src/ (`skip`: only when missing, --no-build). */
export function ensureBuild(log: (line: string) => void, skip = false) {
  const main = path.join(ROOT, 'dist/main.js');
  if (skip && fs.existsSync(main)) return;
  if (fs.existsSync(main) && fs.statSync(main).mtimeMs >= newestMtime(path.join(ROOT, 'src'))) return;
  log('building dist/ (npm run build)');
  const result = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
  if (result.status !== 0) throw new Error('npm run build failed');
}
