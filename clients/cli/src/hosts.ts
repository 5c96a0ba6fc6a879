// The credentials file, `$XDG_CONFIG_HOME/svc/hosts.json` (default `~/.config/svc/hosts.json`): one
// entry per profile, each with its server and credentials. The directory is 0700 and the file 0600
// whatever the umask; a write goes to a temporary file in the same directory, which is then renamed
// over the old one, so a reader never sees half a file and a crash never loses the old one.
// Refreshing rotates the refresh token, so two commands refreshing at once would spend the same token
// twice, and the service then revokes the whole grant: withLock() serialises them.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { CliFailure } from './failures.ts';

export interface Profile {
  /** The server, e.g. `https://api.example.com`. */
  url: string;
  /** `oauth`: device login (with a refresh token); `token`: a personal access token from --with-token. */
  auth: 'oauth' | 'token';
  access_token: string;
  refresh_token?: string;
  /** ISO time the access token expires (oauth). */
  expires_at?: string;
  /** The granted scopes (oauth); unknown for a personal access token. */
  scope?: string;
  /** The e-mail address the credentials belong to, as the server said at login. */
  user?: string | null;
}

export interface HostsFile {
  profiles: Record<string, Profile>;
}

export function configDir(env: Record<string, string | undefined>): string {
  const xdg = env.XDG_CONFIG_HOME;
  // The XDG spec: a relative value is invalid and ignored.
  const base = xdg && path.isAbsolute(xdg) ? xdg : path.join(env.HOME || os.homedir(), '.config');
  return path.join(base, 'svc');
}

export function hostsPath(dir: string): string {
  return path.join(dir, 'hosts.json');
}

export function readHosts(dir: string): HostsFile {
  const file = hostsPath(dir);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { profiles: {} };
    throw error;
  }
  try {
    const parsed = JSON.parse(text) as HostsFile;
    if (!parsed || typeof parsed.profiles !== 'object' || parsed.profiles === null) throw new Error('no profiles');
    return parsed;
  } catch {
    throw new CliFailure(1, `${file} is not a valid credentials file: fix or remove it, then run \`svc-cli login\``);
  }
}

export function writeHosts(dir: string, hosts: HostsFile): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  // mkdir's mode is filtered by the umask, and the directory may predate us.
  fs.chmodSync(dir, 0o700);
  const temporary = path.join(dir, `.hosts.json.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const fd = fs.openSync(temporary, 'wx', 0o600);
  try {
    fs.writeSync(fd, JSON.stringify(hosts, null, 2) + '\n');
    fs.fchmodSync(fd, 0o600);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(temporary, hostsPath(dir));
}

const LOCK_STALE_MS = 30_000;
const LOCK_WAIT_MS = 15_000;

/** Runs `fn` holding `<dir>/hosts.json.lock` (waits for another holder; takes over a stale lock). */
export async function withLock<T>(dir: string, fn: () => Promise<T>): Promise<T> {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const lock = path.join(dir, 'hosts.json.lock');
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      fs.closeSync(fs.openSync(lock, 'wx', 0o600));
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const age = Date.now() - (fs.statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > LOCK_STALE_MS) fs.rmSync(lock, { force: true });
      else if (Date.now() > deadline)
        throw new CliFailure(1, `${lock} is held by another svc-cli; remove it if none is running`);
      else await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  try {
    return await fn();
  } finally {
    fs.rmSync(lock, { force: true });
  }
}
