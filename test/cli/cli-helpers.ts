// Running the `svc` CLI from tests: in-process through runCli (fast), or as a real subprocess of
// Node 24 on the same database (what an operator runs), plus a snapshot of the tables a command
// may write, to prove that a refused command wrote nothing.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCli } from '../../src/main.ts';
import type { TestApp } from '../support/app.ts';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const NODE = path.join(ROOT, 'node_modules/.bin/node');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** runCli in this process; stdout/stderr are the lines the CLI would print, newline-terminated. */
export async function cli(env: Record<string, string>, argv: string[]): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, env, {
    out: (text) => (stdout += text + '\n'),
    err: (text) => (stderr += text + '\n'),
  });
  return { code, stdout, stderr };
}

/** The environment of a subprocess: the test app's settings and nothing of the test runner's. */
export function processEnv(env: Record<string, string>): Record<string, string> {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', ...env };
}

export function spawnSvc(env: Record<string, string>, argv: string[]): ChildProcess {
  return spawn(NODE, ['--disable-warning=ExperimentalWarning', 'src/main.ts', ...argv], {
    cwd: ROOT,
    env: processEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** `node src/main.ts …` as a subprocess, to completion. */
export function svc(env: Record<string, string>, argv: string[], timeoutMs = 60_000): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawnSvc(env, argv);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk) => (stdout += chunk));
    child.stderr!.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`svc ${argv.join(' ')} timed out; stderr: ${stderr}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr });
    });
  });
}

/** Resolves with the first line of the child's stdout matching `pattern` (and the output so far). */
export function waitForLine(child: ChildProcess, pattern: RegExp, timeoutMs = 60_000): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    let stderr = '';
    const timer = setTimeout(
      () => done(new Error(`no line matching ${pattern} within ${timeoutMs} ms; stdout: ${buffer}; stderr: ${stderr}`)),
      timeoutMs,
    );
    const onData = (chunk: Buffer) => {
      buffer += chunk;
      for (const line of buffer.split('\n')) {
        const match = pattern.exec(line);
        if (match) return done(null, match);
      }
    };
    const onErr = (chunk: Buffer) => (stderr += chunk);
    const onExit = (code: number | null) =>
      done(new Error(`exited with ${code} before printing ${pattern}; stdout: ${buffer}; stderr: ${stderr}`));
    function done(error: Error | null, match?: RegExpExecArray) {
      clearTimeout(timer);
      child.stdout!.off('data', onData);
      child.stderr!.off('data', onErr);
      child.off('exit', onExit);
      if (error) reject(error);
      else resolve(match!);
    }
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onErr);
    child.on('exit', onExit);
  });
}

export function exitOf(
  child: ChildProcess,
  timeoutMs = 30_000,
): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve, reject) => {
    if (child.exitCode !== null || child.signalCode !== null)
      return resolve({ code: child.exitCode, signal: child.signalCode });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error('the process did not exit in time'));
    }, timeoutMs);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal });
    });
  });
}

/**
 * Every row of the tables the CLI writes, as one string: equal snapshots mean nothing was written.
 * Leaves out a token's last_used_at: a request made earlier in the test stamps it without awaiting
 * the write (tokens/pat-resolver.ts), so it may land between two snapshots; the CLI never writes it.
 */
export async function snapshot(t: TestApp): Promise<string> {
  const db = t.ctx.db.kysely;
  const tables = ['users', 'teams', 'memberships', 'personal_access_tokens'] as const;
  const dump: Record<string, unknown[]> = {};
  for (const table of tables) {
    dump[table] = (await db.selectFrom(table).selectAll().orderBy('id').execute()).map((row) => {
      const { last_used_at: _stampedByRequests, ...rest } = row as Record<string, unknown>;
      return rest;
    });
  }
  return JSON.stringify(dump);
}
