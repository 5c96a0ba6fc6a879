// Spawns real `svc` processes (worker, serve) on the test's database, trusting the test CA through
// NODE_EXTRA_CA_CERTS, and collects their output.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before } from 'node:test';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { webhookFixture, type WebhookFixture } from './setup.ts';
import { testPki } from '../support/tls.ts';

const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));

export interface Svc {
  child: ChildProcess;
  output(): string;
  /** Resolves with the first output line matching `pattern`. */
  waitForLine(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export async function caFile(dir: string): Promise<string> {
  const file = path.join(dir, 'test-ca.pem');
  fs.writeFileSync(file, (await testPki()).caPem);
  return file;
}

export async function spawnSvc(args: string[], env: Record<string, string>): Promise<Svc> {
  const child = spawn(process.execPath, ['--disable-warning=ExperimentalWarning', MAIN, ...args], {
    env: { PATH: process.env.PATH ?? '', NODE_EXTRA_CA_CERTS: await caFile(env.SERVICE_DATA_DIR), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const listeners: (() => void)[] = [];
  const onData = (chunk: Buffer) => {
    output += chunk.toString('utf8');
    for (const listener of listeners) listener();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    output: () => output,
    exited,
    // 60 s: a process starting beside other test files on a loaded two-core machine can take tens of
    // seconds; a process that dies fails the wait at once instead.
    waitForLine(pattern, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const match = pattern.exec(output);
          if (match) {
            clearTimeout(timer);
            resolve(match);
          }
        };
        const timer = setTimeout(
          () => reject(new Error(`no output matching ${pattern} in ${timeoutMs} ms; got:\n${output}`)),
          timeoutMs,
        );
        void exited.then(({ code, signal }) => {
          clearTimeout(timer);
          if (!pattern.exec(output))
            reject(new Error(`exited (${signal ?? code}) before printing ${pattern}; got:\n${output}`));
        });
        listeners.push(check);
        check();
      });
    },
  };
}

export async function stop(svc: Svc, signal: NodeJS.Signals = 'SIGTERM') {
  if (svc.child.exitCode === null && svc.child.signalCode === null) svc.child.kill(signal);
  return svc.exited;
}

/**
 * `svc worker` processes for one test suite: start() waits until one runs (60 s unless told; several
 * processes starting at once on a loaded machine need longer); killAll() SIGKILLs every one started.
 */
export function workerProcesses(env: () => Record<string, string>) {
  const started: Svc[] = [];
  return {
    async start(timeoutMs?: number): Promise<Svc> {
      const svc = await spawnSvc(['worker'], env());
      started.push(svc);
      await svc.waitForLine(/svc worker running/, timeoutMs);
      return svc;
    },
    async killAll(): Promise<void> {
      for (const svc of started) await stop(svc, 'SIGKILL');
    },
  };
}

/**
 * What every suite of real `svc worker` processes sets up: a webhook fixture with `settings`, a
 * receiver, and its workers, made before the suite's tests and torn down after them (workers first).
 * Call it inside `describe`; read `f` and `r` inside the tests (they exist once `before` has run).
 */
export function workerProcessSuite(settings: Record<string, string>) {
  const suite = {} as {
    f: WebhookFixture;
    r: Receiver;
    worker: (timeoutMs?: number) => Promise<Svc>;
    killWorkers: () => Promise<void>;
  };
  const workers = workerProcesses(() => suite.f.t.env);
  suite.worker = (timeoutMs) => workers.start(timeoutMs);
  suite.killWorkers = () => workers.killAll();
  before(async () => {
    suite.f = await webhookFixture(settings);
    suite.r = await startReceiver();
  });
  after(async () => {
    await workers.killAll();
    await suite.f.close();
    await suite.r.close();
  });
  return suite;
}
