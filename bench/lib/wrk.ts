// Runs wrk (Debian's, one thread, pinned to the client CPU) with bench/wrk/requests.lua and
// measures the CPU of the server processes around it. Any socket error or non-2xx fails the run.
import path from 'node:path';
import { CpuProbe } from './proc.ts';
import { ROOT, runAsync } from './processes.ts';

export const CLIENT_CPU = 1;
export const SERVER_CPU = 0;
export const CONNECTIONS = 50;
/** A round in which processes other than ours used more than this many cores is dropped. */
export const CONTENTION_LIMIT_CORES = 0.1;

export interface WrkOptions {
  url: string;
  seconds: number;
  /** Process trees that make up the server under test (for CPU per request). */
  serverPids: number[];
  tokensFile?: string;
  bodiesFile?: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  /** Mean pause per connection between requests (pacing; each pause drawn at random, bench/wrk/requests.lua). */
  delayMs?: number;
  connections?: number;
}

export interface WrkResult {
  requests: number;
  rps: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  cpuUsPerRequest: number;
  otherCores: number;
  softirqCores: number;
  clean: boolean;
}

export async function wrk(options: WrkOptions): Promise<WrkResult> {
  const url = new URL(options.url);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    BENCH_METHOD: options.method ?? 'GET',
    BENCH_PATH: url.pathname + url.search,
    BENCH_DELAY_MS: String(options.delayMs ?? 0),
  };
  if (options.tokensFile) env.BENCH_TOKENS = options.tokensFile;
  if (options.bodiesFile) env.BENCH_BODIES = options.bodiesFile;
  if (options.headers)
    env.BENCH_HEADERS = Object.entries(options.headers)
      .map(([k, v]) => `${k}: ${v}`)
      .join('|');
  const args = [
    '-c',
    String(CLIENT_CPU),
    'wrk',
    '-t1',
    `-c${options.connections ?? CONNECTIONS}`,
    `-d${options.seconds}s`,
    '--timeout',
    '5s',
    '-s',
    path.join(ROOT, 'bench/wrk/requests.lua'),
    `${url.origin}/`,
  ];
  const probe = new CpuProbe(options.serverPids).start();
  const { stdout, stderr, code } = await runAsync('taskset', args, { env });
  const cpu = probe.stop();
  const line = stdout.split('\n').find((l) => l.startsWith('BENCH_RESULT '));
  if (code !== 0 || !line) throw new Error(`wrk failed (${code}) against ${options.url}:\n${stdout}\n${stderr}`);
  const result = JSON.parse(line.slice('BENCH_RESULT '.length));
  const errors = Object.entries(result.errors as Record<string, number>).filter(([, n]) => n > 0);
  if (errors.length) {
    throw new Error(
      `wrk against ${options.url}: ${errors.map(([k, n]) => `${n} ${k} errors`).join(', ')} in ${result.requests} requests\n${stdout}`,
    );
  }
  const seconds = result.duration_us / 1e6;
  return {
    requests: result.requests,
    rps: result.requests / seconds,
    p50Ms: result.latency_us.p50 / 1000,
    p90Ms: result.latency_us.p90 / 1000,
    p99Ms: result.latency_us.p99 / 1000,
    cpuUsPerRequest: ((cpu.serverTicks / 100) * 1e6) / result.requests,
    otherCores: cpu.otherCores,
    softirqCores: cpu.softirqCores,
    clean: cpu.otherCores <= CONTENTION_LIMIT_CORES,
  };
}
