// Running svc-cli as a person does: the bin as a real process of Node 24, with its own config
// directory (XDG_CONFIG_HOME), talking HTTP to the real service.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const CLI_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const BIN = path.join(CLI_ROOT, 'bin/svc-cli.mjs');

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** A fresh home for one test: HOME and XDG_CONFIG_HOME inside it. */
export function tempHome(): { home: string; config: string; env: Record<string, string>; remove(): void } {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-cli-'));
  const config = path.join(home, 'xdg');
  return {
    home,
    config,
    env: { HOME: home, XDG_CONFIG_HOME: config },
    remove: () => fs.rmSync(home, { recursive: true, force: true }),
  };
}

export function spawnCli(args: string[], env: Record<string, string>, stdin?: string): ChildProcess {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
    stdio: [stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  if (stdin !== undefined) child.stdin!.end(stdin);
  return child;
}

export function finished(child: ChildProcess, timeoutMs = 60_000): Promise<Run> {
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`svc-cli did not finish in ${timeoutMs} ms; stderr: ${stderr}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr });
    });
  });
}

export function cli(args: string[], env: Record<string, string>, stdin?: string): Promise<Run> {
  return finished(spawnCli(args, env, stdin));
}

/** Resolves with the match once the child's stderr so far matches `pattern`. */
export function stderrMatch(child: ChildProcess, pattern: RegExp, timeoutMs = 30_000): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`no ${pattern} in svc-cli's stderr: ${text}`)), timeoutMs);
    child.stderr!.on('data', (chunk) => {
      text += chunk;
      const match = pattern.exec(text);
      if (match) {
        clearTimeout(timer);
        resolve(match);
      }
    });
  });
}

/** A stand-in for xdg-open on PATH that records the address it was asked to open. */
export function fakeOpener(home: string): { bin: string; opened(): string[] } {
  const bin = path.join(home, 'bin');
  const record = path.join(home, 'opened.txt');
  fs.mkdirSync(bin, { recursive: true });
  fs.writeFileSync(path.join(bin, 'xdg-open'), `#!/bin/sh\necho "$1" >> '${record}'\n`, { mode: 0o755 });
  return {
    bin,
    opened: () => (fs.existsSync(record) ? fs.readFileSync(record, 'utf8').split('\n').filter(Boolean) : []),
  };
}
