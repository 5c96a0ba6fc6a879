// What the webhook sections share: the delivery child process (bench/inproc/webhooks.ts, run on the
// server CPU with the service's own modules: the delivery worker, ctx.events.emit(), the raw undici
// loop), the receiver's self-signed certificate, the worker's environment, and the check that the
// build has a delivery engine at all.
import fs from 'node:fs';
import path from 'node:path';
import { serviceEnv } from '../lib/app-server.ts';
import { NODE, ROOT, run, runAsync } from '../lib/processes.ts';
import { SERVER_CPU } from '../lib/wrk.ts';
import type { Plan } from '../run.ts';

/** Why this build cannot be measured (a missing part of the delivery engine), or null. */
export function available(): string | null {
  for (const file of [
    'src/webhooks/delivery-worker.ts',
    'src/events/outbox.ts',
    'src/webhooks/subscriptions.ts',
    'src/webhooks/signing.ts',
  ]) {
    if (!fs.existsSync(path.join(ROOT, file))) return `not available: ${file} is missing`;
  }
  const source = fs.readFileSync(path.join(ROOT, 'src/webhooks/delivery-worker.ts'), 'utf8');
  if (!source.includes('export function webhookDeliveryTask')) return 'not available: no webhookDeliveryTask';
  return null;
}

/** A self-signed certificate for 127.0.0.1: the receiver's, trusted by the worker as its CA. */
export function certificate(dir: string) {
  const cert = path.join(dir, 'receiver-cert.pem');
  const key = path.join(dir, 'receiver-key.pem');
  run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-days',
    '2',
    '-keyout',
    key,
    '-out',
    cert,
    '-subj',
    '/CN=127.0.0.1',
    '-addext',
    'subjectAltName=IP:127.0.0.1',
  ]);
  return { cert, key };
}

/** One BENCH_RESULT line of the child: its figures by name. */
export type Line = Record<string, number>;

/**
 * BENCH_CPU_PROFILE_DIR=<dir> on `npm run bench`: each delivery process writes a V8 CPU profile of its
 * measured window to <dir>/<mode>[-pg].cpuprofile (bench/inproc/webhooks.ts, profiled; a later round's
 * process of the same mode overwrites an earlier one's). The child's environment is built afresh, so
 * the setting is handed on here.
 */
function profileEnv(mode: string, pg: boolean): NodeJS.ProcessEnv {
  const dir = process.env.BENCH_CPU_PROFILE_DIR;
  if (!dir) return {};
  fs.mkdirSync(dir, { recursive: true });
  return { BENCH_CPU_PROFILE: path.resolve(dir, `${mode}${pg ? '-pg' : ''}.cpuprofile`) };
}

/** Runs bench/inproc/webhooks.ts with `config` on the server CPU and returns its result lines. */
export async function child(plan: Plan, env: NodeJS.ProcessEnv, config: Record<string, unknown>): Promise<Line[]> {
  const pg = env.DATABASE_URL?.startsWith('postgres') ?? false;
  const result = await runAsync(
    'taskset',
    [
      '-c',
      String(SERVER_CPU),
      NODE,
      '--disable-warning=ExperimentalWarning',
      path.join(ROOT, 'bench/inproc/webhooks.ts'),
      JSON.stringify(config),
    ],
    {
      env: { ...env, BENCH_ROOT_PID: String(process.pid), ...profileEnv(String(config.mode), pg) },
    },
  );
  if (result.code !== 0)
    throw new Error(`webhook benchmark (${config.mode}) failed:\n${result.stderr}\n${result.stdout.slice(-2000)}`);
  const lines = result.stdout
    .split('\n')
    .filter((l) => l.startsWith('BENCH_RESULT '))
    .map((l) => JSON.parse(l.slice(13)) as Line);
  plan.log(`${config.mode}${pg ? ' pg' : ''}: ${lines.map((l) => JSON.stringify(l)).join(' ')}`);
  return lines;
}

/** The environment of a delivery process: webhooks on, the loopback receiver allowed and its certificate trusted. */
export function webhookEnv(dataDir: string, databaseUrl: string, caFile: string): NodeJS.ProcessEnv {
  return serviceEnv(dataDir, databaseUrl, {
    SERVICE_WEBHOOKS_ENABLED: 'true',
    SERVICE_WEBHOOKS_ALLOWED_CIDRS: '127.0.0.1/32',
    NODE_EXTRA_CA_CERTS: caFile,
  });
}
