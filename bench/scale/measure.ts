// One size of the scale scenario, measured: the seeded database served by the production build,
// every figure taken in the same way at every size (bench/scenarios/scale.ts runs the sizes).
import fs from 'node:fs';
import path from 'node:path';
import { request } from 'undici';
import { startAppServer, type AppServer } from '../lib/app-server.ts';
import { NODE, ROOT, runAsync } from '../lib/processes.ts';
import { SERVER_CPU, wrk, type WrkResult } from '../lib/wrk.ts';
import type { Plan } from '../run.ts';
import type { Fixtures } from './fixtures.ts';
import { DEEP_CURSOR_PAGE, DEEP_MEMBER_PAGE } from './pages.ts';

/** Mean per-connection pause that paces 50 connections at about 10k requests/s (as bench/scenarios/http.ts). */
const PACED_DELAY_MS = 5;
const DELIVERY_CONCURRENCY = 8;
const EVENT_RATE = 100;

export interface SizeContext {
  plan: Plan;
  size: number;
  dir: string;
  env: NodeJS.ProcessEnv;
  fixtures: Fixtures;
  /** Whether the build has an audit log (seeded alongside). */
  audit: boolean;
  /** Process trees of the database and cache (PostgreSQL mode): their CPU is the service's. */
  servicePids: number[];
  serverEnv: Record<string, string>;
  receiver: { url: string; pid: number; caFile: string };
  seconds: number;
  warmupSeconds: number;
  /** Whether this round measures the purge: it deletes the expired rows, so only one round per size can. */
  purge: boolean;
  /** The deep cursor pages' links, found by the size's first round (following 999 next links) and reused. */
  deepLinks: DeepLinks;
  /** The highest deliveries/s the run has measured so far (it sizes the next measurement's queue). */
  deliveryRate: { highest?: number };
  /**
   * The size's server: started and warmed by its first visit, then kept by the caller for the later
   * rounds (which measure a warm server without windows of warm-up) and stopped at the end of the run.
   */
  served: { server?: AppServer };
}

export interface DeepLinks {
  log?: string;
  audit?: string | null;
}

export type Values = Record<string, number | null>;

/** Runs a TypeScript child pinned to the server's CPU; returns its BENCH_RESULT lines. */
export async function child(
  script: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<Record<string, unknown>[]> {
  const result = await runAsync(
    'taskset',
    ['-c', String(SERVER_CPU), NODE, '--disable-warning=ExperimentalWarning', path.join(ROOT, script), ...args],
    {
      env: { ...env, BENCH_ROOT_PID: String(process.pid) },
    },
  );
  if (result.code !== 0)
    throw new Error(
      `${script} ${args.join(' ').slice(0, 200)} failed:\n${result.stderr.slice(-3000)}\n${result.stdout.slice(-1000)}`,
    );
  return result.stdout
    .split('\n')
    .filter((l) => l.startsWith('BENCH_RESULT '))
    .map((l) => JSON.parse(l.slice(13)));
}

/** The path and query of a page link (links are absolute, on BASE_URL). */
const pathOf = (link: string) => {
  const url = new URL(link);
  return url.pathname + url.search;
};

async function getJson(url: string, token: string): Promise<Record<string, unknown>> {
  const response = await request(url, { headers: { authorization: `Bearer ${token}` } });
  const body = await response.body.text();
  if (response.statusCode !== 200) throw new Error(`GET ${url} → ${response.statusCode}: ${body.slice(0, 300)}`);
  return JSON.parse(body);
}

/** The HTTP figures and the purge under load, served by the size's server; then the in-process ones. */
export async function measureSize(c: SizeContext): Promise<{ values: Values; details: Record<string, unknown> }> {
  const values: Values = {};
  const details: Record<string, unknown> = {};
  const pats = path.join(c.dir, 'pats.txt');
  const oauth = path.join(c.dir, 'oauth.txt');
  fs.writeFileSync(pats, c.fixtures.pats.join('\n') + '\n');
  fs.writeFileSync(oauth, c.fixtures.oauth.join('\n') + '\n');
  const fresh = c.served.server === undefined;
  const server = (c.served.server ??= await startAppServer({
    name: `scale-${c.size}`,
    dataDir: c.dir,
    databaseUrl: String(c.env.DATABASE_URL),
    cpu: SERVER_CPU,
    env: c.serverEnv,
  }));
  const pids = [server.pid, ...c.servicePids];
  const members = `/api/v1/teams/${c.fixtures.bigTeamId}/members/`;
  const log = `/api/v1/teams/${c.fixtures.hooksTeamId}/webhooks/${c.fixtures.subscriptionId}/logs/`;
  const audit = `/api/v1/teams/${c.fixtures.hooksTeamId}/audit-log/`;
  // The 1,000th page of each log: its cursor, from following the next links.
  const deep = async (first: string) => {
    let link = first;
    for (let page = 1; page < DEEP_CURSOR_PAGE; page++)
      link = pathOf((await getJson(server.url + link, c.fixtures.caller)).next as string);
    return link;
  };
  c.deepLinks.log ??= await deep(log);
  if (c.deepLinks.audit === undefined) c.deepLinks.audit = c.audit ? await deep(audit) : null;
  const { log: deepLog, audit: deepAudit } = c.deepLinks;
  const caller = { headers: { Authorization: `Bearer ${c.fixtures.caller}` } };
  type Target = [id: string, path: string, auth: { tokensFile: string } | { headers: Record<string, string> }];
  const targets: Target[] = [
    ['me_pat', '/api/v1/me/', { tokensFile: pats }],
    ['me_oauth', '/api/v1/me/', { tokensFile: oauth }],
    ['teams', '/api/v1/teams/', caller],
    ['members_first', members, caller],
    ['members_deep', `${members}?page=${DEEP_MEMBER_PAGE}`, caller],
    ['log_first', log, caller],
    ['log_deep', deepLog, caller],
    ...(deepAudit ? [['audit_first', audit, caller] as Target, ['audit_deep', deepAudit, caller] as Target] : []),
  ];
  for (const [id, target, auth] of targets) {
    const token =
      'tokensFile' in auth
        ? fs.readFileSync(auth.tokensFile, 'utf8').split('\n', 1)[0]
        : auth.headers.Authorization.slice(7);
    await getJson(server.url + target, token); // preflight: 200, or the run stops here
    const run = (seconds: number, delayMs = 0) =>
      wrk({ url: server.url + target, seconds, serverPids: pids, delayMs, ...auth });
    if (fresh) await run(c.warmupSeconds);
    const result = await run(c.seconds);
    // A window in which no request completed (the server starved by other load) measures nothing.
    const answered = result.requests > 0;
    values[`${id}_rps`] = answered ? result.rps : null;
    values[`${id}_p99`] = answered ? result.p99Ms : null;
    values[`${id}_cpu`] = answered ? result.cpuUsPerRequest : null;
    details[id] = summary(result);
    c.plan.log(
      `${c.size}: ${id} ${Math.round(result.rps)}/s p99 ${result.p99Ms.toFixed(2)} ms, ${result.cpuUsPerRequest.toFixed(0)} µs CPU/request`,
    );
  }

  // The purge of the expired rows while /me (PAT) is served at ~10k req/s: p99 then and idle.
  if (c.purge) await measurePurge(c, server, pids, pats, values, details);
  await measureInProcess(c, values, details);
  return { values, details };
}

async function measurePurge(
  c: SizeContext,
  server: AppServer,
  pids: number[],
  pats: string,
  values: Values,
  details: Record<string, unknown>,
) {
  const paced = (seconds: number) =>
    wrk({ url: `${server.url}/api/v1/me/`, seconds, serverPids: pids, tokensFile: pats, delayMs: PACED_DELAY_MS });
  await paced(c.warmupSeconds);
  const idle = await paced(c.seconds);
  const purging = child('bench/scale/inproc.ts', [JSON.stringify({ mode: 'purge', delayMs: 300 })], c.env);
  const during = await paced(c.seconds);
  const [purge] = (await purging) as { rows: number; seconds: number; perSecond: number; cpuUsPerRow: number }[];
  values.me_paced_p99_idle = idle.requests > 0 ? idle.p99Ms : null;
  values.me_paced_p99_purge = during.requests > 0 ? during.p99Ms : null;
  values.purge_rate = purge.perSecond;
  if (c.env.DATABASE_URL?.startsWith('sqlite:')) values.purge_cpu = purge.cpuUsPerRow;
  details.purge = { ...purge, windowSeconds: c.seconds, idle: summary(idle), during: summary(during) };
  c.plan.log(
    `${c.size}: purge ${purge.rows} rows in ${purge.seconds.toFixed(2)} s; /me paced p99 ${idle.p99Ms.toFixed(2)} ms idle, ${during.p99Ms.toFixed(2)} ms during`,
  );
}

/** Deliveries with the seeded log behind them, and the suppression check: child processes of their own. */
async function measureInProcess(c: SizeContext, values: Values, details: Record<string, unknown>) {
  // Deliveries with the seeded log behind them: one worker's rate, and event → first attempt.
  const hooksEnv = {
    ...c.env,
    SERVICE_WEBHOOKS_ENABLED: 'true',
    SERVICE_WEBHOOKS_ALLOWED_CIDRS: '127.0.0.1/32',
    NODE_EXTRA_CA_CERTS: c.receiver.caFile,
  };
  const base = {
    receiverUrl: c.receiver.url,
    caFile: c.receiver.caFile,
    seconds: c.seconds,
    warmupSeconds: c.warmupSeconds,
    serverPids: [c.receiver.pid, ...c.servicePids],
  };
  const [engine] = await child(
    'bench/inproc/webhooks.ts',
    [
      JSON.stringify({
        ...base,
        mode: 'engine',
        concurrencies: [DELIVERY_CONCURRENCY],
        expectedRate: c.deliveryRate.highest,
        copyRefill: true,
      }),
    ],
    hooksEnv,
  );
  const [latency] = await child(
    'bench/inproc/webhooks.ts',
    [JSON.stringify({ ...base, mode: 'latency', rates: [EVENT_RATE] })],
    hooksEnv,
  );
  c.deliveryRate.highest = Math.max(c.deliveryRate.highest ?? 0, engine.rate as number);
  values.deliveries_rate = engine.rate as number;
  values.deliveries_cpu = engine.cpuUsPerDelivery as number;
  values.first_attempt_p99 = latency.p99Ms as number;
  details.deliveries = { engine, latency };
  c.plan.log(
    `${c.size}: ${Math.round(engine.rate as number)} deliveries/s at concurrency ${DELIVERY_CONCURRENCY}; event → first attempt p99 ${(latency.p99Ms as number).toFixed(2)} ms`,
  );

  const [suppression] = await child(
    'bench/scale/inproc.ts',
    [JSON.stringify({ mode: 'suppression', seconds: c.seconds, suppressed: c.size })],
    c.env,
  );
  values.suppression_rate = suppression.perSecond as number;
  values.suppression_p99 = suppression.p99Ms as number;
  values.suppression_cpu = suppression.cpuUsPerCheck as number;
  details.suppression = suppression;
}

function summary(r: WrkResult) {
  return {
    rps: Math.round(r.rps),
    p50Ms: r.p50Ms,
    p90Ms: r.p90Ms,
    p99Ms: r.p99Ms,
    cpuUsPerRequest: Math.round(r.cpuUsPerRequest),
    otherCores: Math.round(r.otherCores * 1000) / 1000,
  };
}
