// Starts the service under test: the production build (dist/main.js) in production mode, with
// default production logging (stdout to /dev/null), the API throttle lifted so that 429s are not
// what is measured, and no in-process worker unless asked.
import path from 'node:path';
import { request } from 'undici';
import { NODE, ROOT, freePort, portOpen, run, startProcess, type Started } from './processes.ts';

export const BENCH_SECRET_KEY = 'bench-secret-key-0123456789abcdefghijklmnopqrstuvwxyz';
export const LIFTED_THROTTLE = '100000000/hour';
export const SEED_USERS = 64;
export const SEED_TOKENS_PER_USER = 16; // 1,024 PATs

export interface AppServer extends Started {
  url: string;
}

/** The environment of every service process of the benchmark (server, worker, seeding). */
export function serviceEnv(
  dataDir: string,
  databaseUrl: string,
  extra: Record<string, string> = {},
): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_ENV: 'production',
    SECRET_KEY: BENCH_SECRET_KEY,
    SERVICE_DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    HOST: '127.0.0.1',
    SERVICE_THROTTLE_USER: LIFTED_THROTTLE,
    SERVICE_THROTTLE_ANON: LIFTED_THROTTLE,
    SERVICE_THROTTLE_AUTH: LIFTED_THROTTLE,
    ...extra,
  };
}

/**
 * Seeds users and PATs with bench/seed.ts (the service's own functions) of `checkout` (this one, or an older
 * one whose database newer builds migrate forward); writes the raw tokens to `tokensFile`.
 */
export function seedTokens(dataDir: string, databaseUrl: string, tokensFile: string, checkout = ROOT) {
  run(
    NODE,
    [
      '--disable-warning=ExperimentalWarning',
      path.join(checkout, 'bench/seed.ts'),
      tokensFile,
      String(SEED_USERS),
      String(SEED_TOKENS_PER_USER),
    ],
    {
      env: serviceEnv(dataDir, databaseUrl),
    },
  );
}

export async function startAppServer(options: {
  name: string;
  dataDir: string;
  databaseUrl: string;
  cpu: number;
  env?: Record<string, string>;
  worker?: boolean;
  /** The build's entry point; dist/main.js unless a copy of another build is measured (bench/compare.ts). */
  main?: string;
  /** Options for node itself, before the entry point (`--cpu-prof …`: bench/profile.ts). */
  nodeArgs?: string[];
}): Promise<AppServer> {
  const port = await freePort();
  const env = serviceEnv(options.dataDir, options.databaseUrl, {
    PORT: String(port),
    BASE_URL: `http://127.0.0.1:${port}`,
    ...options.env,
  });
  const started = await startProcess({
    name: options.name,
    command: NODE,
    args: [
      ...(options.nodeArgs ?? []),
      options.main ?? path.join(ROOT, 'dist/main.js'),
      'serve',
      ...(options.worker ? [] : ['--no-worker']),
    ],
    env,
    cpu: options.cpu,
    logFile: path.join(options.dataDir, `${options.name}.stderr.log`),
    stdoutToNull: true,
    ready: () => portOpen(port),
    timeoutMs: 60_000,
  });
  return { ...started, url: `http://127.0.0.1:${port}` };
}

export async function startBare(options: {
  name: string;
  dir: string;
  cpu: number;
  env?: Record<string, string>;
  nodeArgs?: string[];
}): Promise<AppServer> {
  const port = await freePort();
  const started = await startProcess({
    name: options.name,
    command: NODE,
    args: [...(options.nodeArgs ?? []), path.join(ROOT, 'bench/servers/bare-http.mjs')],
    env: { PATH: process.env.PATH, PORT: String(port), ...options.env },
    cpu: options.cpu,
    logFile: path.join(options.dir, `${options.name}.log`),
    ready: (log) => log.includes('listening'),
  });
  return { ...started, url: `${options.env?.BARE_TLS_CERT ? 'https' : 'http'}://127.0.0.1:${port}` };
}

/** One request through a real socket: the route must answer 200 (wrk only counts ≥ 400 as errors). */
export async function preflight(url: string, token: string): Promise<number> {
  const response = await request(`${url}/api/v1/me/`, { headers: { authorization: `Bearer ${token}` } });
  const body = await response.body.text();
  if (response.statusCode !== 200) throw new Error(`preflight ${url}/api/v1/me/ → ${response.statusCode}: ${body}`);
  return Buffer.byteLength(body);
}
