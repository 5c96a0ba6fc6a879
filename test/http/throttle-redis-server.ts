// A private redis-server for the tests that stop Redis or share it between two apps: the machine's
// Redis is never stopped. Started on a free port without persistence, killed by its own pid.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { freePort } from '../support/net.ts';

export const redisServerAvailable = spawnSync('redis-server', ['--version']).status === 0;

export interface PrivateRedis {
  url: string;
  port: number;
  /** Kills the server (SIGKILL: an outage, not a clean shutdown). */
  kill(): Promise<void>;
  /** Starts it again on the same port (empty: nothing was saved). */
  restart(): Promise<void>;
}

function launch(port: number): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`redis-server did not start: ${output}`)), 10_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve(child);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited with ${code}: ${output}`));
    });
  });
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  let child = await launch(port);
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    kill: () => stop(child),
    async restart() {
      await stop(child);
      child = await launch(port);
    },
  };
}
