// Private PostgreSQL and Redis instances for the benchmark: started on free, non-default ports
// in a temp dir, pinned beside the server under test, stopped by pid. The machine's own
// PostgreSQL (5432) and Redis (6379) are never touched.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort, run, startProcess, tempDir, type Started } from './processes.ts';

const PG_BIN = ['/usr/lib/postgresql/17/bin', '/usr/lib/postgresql/16/bin', '/usr/lib/postgresql/15/bin'].find((dir) =>
  fs.existsSync(path.join(dir, 'initdb')),
);

export interface PrivatePostgres extends Started {
  url: string;
  /** A fresh database on this instance. */
  createDatabase(name: string): Promise<string>;
  /**
   * Readies the instance for a bulk load: every CPU of the machine, and a WAL large enough that the
   * load forces no checkpoint. Returns what puts it back as started (one CPU, the default WAL size)
   * after a checkpoint, so that what is measured next does not pay for the load's writes.
   */
  bulkLoad(): Promise<() => Promise<void>>;
}

/**
 * max_wal_size while a bulk load runs: more than the largest seed writes (a 1M-row database is ~7 GiB),
 * so that no checkpoint falls inside the load. At the default, 1 GB, a 1M seed checkpoints several
 * times, and every page changed after a checkpoint goes to the WAL whole once more.
 */
const BULK_LOAD_WAL = '32GB';

export function postgresAvailable(): boolean {
  return PG_BIN !== undefined;
}

export async function startPostgres(cpu: number): Promise<PrivatePostgres> {
  if (!PG_BIN) throw new Error('PostgreSQL binaries not found under /usr/lib/postgresql');
  const dir = tempDir('svc-bench-pg-');
  const data = path.join(dir, 'data');
  // PostgreSQL refuses to run as root: when we are root, the instance runs as the postgres user.
  const user = process.getuid?.() === 0 ? 'postgres' : undefined;
  if (user) run('chown', ['-R', user, dir]);
  run(path.join(PG_BIN, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--no-sync'], { user });
  const port = await freePort();
  const started = await startProcess({
    name: 'postgres',
    command: path.join(PG_BIN, 'postgres'),
    args: ['-D', data, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200'],
    cpu,
    user,
    logFile: path.join(dir, 'postgres.log'),
    ready: (log) => log.includes('ready to accept connections'),
  });
  const url = `postgres://postgres@127.0.0.1:${port}`;
  const postmaster = () => Number(fs.readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n', 1)[0]);
  // The postmaster and every process it has forked (its helpers, the backends); a backend forked
  // later inherits the postmaster's CPUs.
  const pin = (cpus: string) => {
    const parent = postmaster();
    const children = spawnSync('pgrep', ['-P', String(parent)], { encoding: 'utf8' })
      .stdout.split('\n')
      .filter(Boolean);
    run('taskset', ['-a', '-p', '-c', cpus, String(parent)]);
    // A child may have exited since pgrep listed it.
    for (const pid of children) spawnSync('taskset', ['-a', '-p', '-c', cpus, pid], { stdio: 'ignore' });
  };
  const admin = async (statements: string[]) => {
    const client = new pg.Client({ connectionString: `${url}/postgres` });
    await client.connect();
    try {
      for (const statement of statements) await client.query(statement);
    } finally {
      await client.end();
    }
  };
  return {
    ...started,
    url,
    async createDatabase(name: string) {
      const client = new pg.Client({ connectionString: `${url}/postgres` });
      await client.connect();
      await client.query(`create database ${name}`);
      await client.end();
      return `${url}/${name}`;
    },
    async bulkLoad() {
      pin(`0-${os.cpus().length - 1}`);
      await admin([`alter system set max_wal_size = '${BULK_LOAD_WAL}'`, 'select pg_reload_conf()']);
      return async () => {
        await admin(['alter system reset max_wal_size', 'select pg_reload_conf()', 'checkpoint']);
        pin(String(cpu));
      };
    },
    async stop() {
      // The postmaster's pid (runuser's child when we are root): a fast shutdown by SIGINT.
      try {
        const pid = postmaster();
        if (pid > 0 && pid !== started.pid) process.kill(pid, 'SIGINT');
      } catch {
        // already gone
      }
      await started.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface PrivateRedis extends Started {
  url: string;
}

export async function startRedis(cpu: number): Promise<PrivateRedis> {
  const dir = tempDir('svc-bench-redis-');
  const port = await freePort();
  const started = await startProcess({
    name: 'redis',
    command: 'redis-server',
    args: ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    cpu,
    logFile: path.join(dir, 'redis.log'),
    ready: (log) => log.includes('Ready to accept connections'),
  });
  return {
    ...started,
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      await started.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
