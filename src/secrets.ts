// SECRET_KEY: required in production; in development and tests it is generated once into the
// data directory (mode 0600) and reused, so sessions and encrypted columns survive restarts.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from './config.ts';

export function ensureSecretKey(config: Config): string {
  if (config.secretKey) return config.secretKey;
  const file = path.join(config.dataDir, 'secret_key');
  fs.mkdirSync(config.dataDir, { recursive: true });
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    const key = randomBytes(32).toString('base64url');
    // 'wx': if another process created it meanwhile, fail and read theirs.
    try {
      fs.writeFileSync(file, key + '\n', { mode: 0o600, flag: 'wx' });
      return key;
    } catch {
      return fs.readFileSync(file, 'utf8').trim();
    }
  }
}
