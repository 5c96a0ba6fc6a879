// Child processes of the harness: servers pinned to a CPU, private PostgreSQL and Redis, and the
// commands it runs (wrk, hyperfine). Everything it starts it stops again by pid.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const NODE = path.join(ROOT, 'node_modules/.bin/node');

const started = new Set<ChildProcess>();

export interface Started {
  name: string;
  pid: number;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Stops every process still running (on exit or error). */
export async function stopAll() {
  await Promise.all([...started].map((child) => stopChild(child)));
}

async function stopChild(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM') {
  if (child.exitCode !== null || child.signalCode !== null) {
    started.delete(child);
    return;
  }
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill(signal);
  const timeout = sleep(10_000).then(() => 'timeout');
  if ((await Promise.race([exited, timeout])) === 'timeout') {
    child.kill('SIGKILL');
    await exited;
  }
  started.delete(child);
}

export interface StartOptions {
  name: string;
  command: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  /** CPU to pin to with taskset (the pid stays the command's: taskset execs it). */
  cpu?: number;
  /** stdout and stderr go to this file (the server's log). */
  logFile: string;
  /** Send stdout to /dev/null instead (request logs at full load), keeping stderr in logFile. */
  stdoutToNull?: boolean;
  /** Resolves with a value once the process is ready (polled every 20 ms). */
  ready: (log: string) => Promise<boolean> | boolean;
  /** Run as this user (private PostgreSQL refuses root). */
  user?: string;
  stopSignal?: NodeJS.Signals;
  timeoutMs?: number;
}

export async function startProcess(options: StartOptions): Promise<Started> {
  const fd = fs.openSync(options.logFile, 'a');
  let command = options.command;
  let args = options.args;
  if (options.user) {
    args = ['-u', options.user, '--', command, ...args];
    command = 'runuser';
  }
  if (options.cpu !== undefined) {
    args = ['-c', String(options.cpu), command, ...args];
    command = 'taskset';
  }
  const out = options.stdoutToNull ? fs.openSync('/dev/null', 'w') : fd;
  const child = spawn(command, args, { env: options.env ?? process.env, stdio: ['ignore', out, fd] });
  fs.closeSync(fd);
  if (out !== fd) fs.closeSync(out);
  started.add(child);
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `${options.name} exited during start (${child.exitCode ?? child.signalCode}); log ${options.logFile}:\n${tail(options.logFile)}`,
      );
    }
    if (await options.ready(fs.readFileSync(options.logFile, 'utf8'))) break;
    if (Date.now() > deadline) {
      await stopChild(child, 'SIGKILL');
      throw new Error(`${options.name} did not become ready; log ${options.logFile}:\n${tail(options.logFile)}`);
    }
    await sleep(20);
  }
  // runuser forks: the process doing the work is its child (counted through the process tree).
  return { name: options.name, pid: child.pid!, child, stop: () => stopChild(child, options.stopSignal) };
}

export function tail(file: string, lines = 20): string {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(port));
    });
  });
}

export function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** Runs a command to completion; throws with its output when it fails. */
export function run(
  command: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; user?: string } = {},
): string {
  if (options.user) {
    args = ['-u', options.user, '--', command, ...args];
    command = 'runuser';
  }
  const result = spawnSync(command, args, {
    env: options.env ?? process.env,
    cwd: options.cwd,
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  if (result.status !== 0) {
    throw new Error(
      `${command} ${args.join(' ')} failed (${result.status ?? result.signal}):\n${result.stdout}\n${result.stderr}`,
    );
  }
  return result.stdout;
}

/** Runs a command asynchronously (so the harness keeps sampling) and returns its stdout. */
export function runAsync(
  command: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv } = {},
): Promise<{ stdout: string; stderr: string; code: number | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    started.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.once('error', reject);
    // 'close', not 'exit': the process can exit before its last output has been read from the pipes.
    child.once('close', (code) => {
      started.delete(child);
      resolve({ stdout, stderr, code });
    });
  });
}

export function commandExists(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}
