// `npm run bench -- scale [--sizes 1k,10k,100k,1m] [--dialect sqlite|postgres]`: how each cost
// grows with the data. First a database per size is seeded in bulk (bench/scale/seed.ts: `size`
// rows of every kind, the same measured fixtures at every size), its on-disk footprint read and the
// query plans of every measured path recorded (bench/scale/plans.ts). Then rounds visit the sizes in
// turn, each round starting one size later, and measure every figure (bench/scale/measure.ts), each
// size served by one server from its first visit (which warms it up) to the end; a figure at a size
// is its median over the rounds. Each is reported as a cost ratio to the smallest
// size's figure: a table per dialect and an SVG plot (bench/scale/report.ts). docs/performance.md, "Scale".
import fs from 'node:fs';
import path from 'node:path';
import { serviceEnv, startBare } from '../lib/app-server.ts';
import type { Started } from '../lib/processes.ts';
import type { Metric } from '../lib/report.ts';
import { postgresAvailable, startPostgres, startRedis, type PrivatePostgres } from '../lib/services.ts';
import { CLIENT_CPU, SERVER_CPU } from '../lib/wrk.ts';
import type { Plan } from '../run.ts';
import type { Fixtures } from '../scale/fixtures.ts';
import { median } from '../lib/stats.ts';
import { child, measureSize, type DeepLinks, type SizeContext, type Values } from '../scale/measure.ts';
import { DEEP_CURSOR_PAGE, DEEP_MEMBER_PAGE } from '../scale/pages.ts';
import { ratioSvg, ratioTable, scaleMetrics, sizeLabel, type Figure } from '../scale/report.ts';
import { certificate } from './webhook-child.ts';

export interface ScaleOptions {
  sizes: number[];
  dialect: 'sqlite' | 'postgres';
}

export interface ScaleResult {
  dialect: string;
  sizes: number[];
  figures: Figure[];
  /** Per size: seeding time, footprint, each figure's raw measurement. */
  perSize: Record<number, Record<string, unknown>>;
  /** Per size: path → the plan of every statement it runs, with the flags of full scans and sorts. */
  plans: Record<number, unknown>;
  table: string;
  svg: string;
}

/** "1k,10k,100k,1m" → [1000, 10000, 100000, 1000000] (ascending; the first is the baseline). */
export function parseSizes(text: string): number[] {
  const sizes = text.split(',').map((part) => {
    const match = /^(\d+)([km]?)$/i.exec(part.trim());
    if (!match) throw new Error(`--sizes: "${part}" is not a size such as 1k, 10k, 100k or 1m`);
    return Number(match[1]) * (match[2].toLowerCase() === 'm' ? 1e6 : match[2].toLowerCase() === 'k' ? 1e3 : 1);
  });
  if (sizes.some((size) => size < 1) || new Set(sizes).size !== sizes.length)
    throw new Error('--sizes: distinct sizes of at least 1');
  return sizes.sort((a, b) => a - b);
}

/** Rounds of a full run (`--rounds` lowers it; `--quick` runs one). */
const SCALE_ROUNDS = 3;

const FIGURES: Omit<Figure, 'values'>[] = [
  { id: 'me_pat_rps', label: 'GET /api/v1/me/ (PAT) throughput', unit: 'req/s', kind: 'rate' },
  { id: 'me_pat_p99', label: 'GET /api/v1/me/ (PAT) p99', unit: 'ms', kind: 'cost' },
  { id: 'me_pat_cpu', label: 'GET /api/v1/me/ (PAT) server CPU', unit: 'µs/req', kind: 'cost' },
  { id: 'me_oauth_rps', label: 'GET /api/v1/me/ (OAuth) throughput', unit: 'req/s', kind: 'rate' },
  { id: 'me_oauth_p99', label: 'GET /api/v1/me/ (OAuth) p99', unit: 'ms', kind: 'cost' },
  { id: 'me_oauth_cpu', label: 'GET /api/v1/me/ (OAuth) server CPU', unit: 'µs/req', kind: 'cost' },
  { id: 'teams_rps', label: 'team list of a user in 200 teams', unit: 'req/s', kind: 'rate' },
  { id: 'teams_cpu', label: 'team list of a user in 200 teams, server CPU', unit: 'µs/req', kind: 'cost' },
  { id: 'members_first_rps', label: 'member list (10,000 members), page 1', unit: 'req/s', kind: 'rate' },
  { id: 'members_first_cpu', label: 'member list, page 1, server CPU', unit: 'µs/req', kind: 'cost' },
  {
    id: 'members_deep_rps',
    label: `member list (10,000 members), page ${DEEP_MEMBER_PAGE}`,
    unit: 'req/s',
    kind: 'rate',
  },
  { id: 'members_deep_cpu', label: `member list, page ${DEEP_MEMBER_PAGE}, server CPU`, unit: 'µs/req', kind: 'cost' },
  { id: 'log_first_rps', label: 'delivery log, first page', unit: 'req/s', kind: 'rate' },
  { id: 'log_first_cpu', label: 'delivery log, first page, server CPU', unit: 'µs/req', kind: 'cost' },
  {
    id: 'log_deep_rps',
    label: `delivery log, page ${DEEP_CURSOR_PAGE.toLocaleString('en-US')} (cursor)`,
    unit: 'req/s',
    kind: 'rate',
  },
  {
    id: 'log_deep_cpu',
    label: `delivery log, page ${DEEP_CURSOR_PAGE.toLocaleString('en-US')}, server CPU`,
    unit: 'µs/req',
    kind: 'cost',
  },
  { id: 'audit_first_rps', label: 'audit log, first page', unit: 'req/s', kind: 'rate' },
  { id: 'audit_first_cpu', label: 'audit log, first page, server CPU', unit: 'µs/req', kind: 'cost' },
  {
    id: 'audit_deep_rps',
    label: `audit log, page ${DEEP_CURSOR_PAGE.toLocaleString('en-US')} (cursor)`,
    unit: 'req/s',
    kind: 'rate',
  },
  {
    id: 'audit_deep_cpu',
    label: `audit log, page ${DEEP_CURSOR_PAGE.toLocaleString('en-US')}, server CPU`,
    unit: 'µs/req',
    kind: 'cost',
  },
  { id: 'deliveries_rate', label: 'webhook deliveries, one worker, concurrency 8', unit: '/s', kind: 'rate' },
  { id: 'deliveries_cpu', label: 'webhook deliveries, worker CPU', unit: 'µs/delivery', kind: 'cost' },
  { id: 'first_attempt_p99', label: 'event → first attempt p99, 100 events/s', unit: 'ms', kind: 'cost' },
  { id: 'suppression_rate', label: 'pre-send suppression check', unit: 'checks/s', kind: 'rate' },
  { id: 'suppression_p99', label: 'pre-send suppression check p99', unit: 'ms', kind: 'cost' },
  { id: 'suppression_cpu', label: 'pre-send suppression check, CPU', unit: 'µs/check', kind: 'cost' },
  { id: 'purge_rate', label: 'housekeeping purge of expired rows', unit: 'rows/s', kind: 'rate' },
  { id: 'purge_cpu', label: 'housekeeping purge, CPU (SQLite: all of it)', unit: 'µs/row', kind: 'cost' },
  { id: 'me_paced_p99_purge', label: 'GET /api/v1/me/ p99 at ~10k req/s during the purge', unit: 'ms', kind: 'cost' },
  { id: 'deliveries_mb_per_million', label: 'delivery log on disk per million rows', unit: 'MB', kind: 'cost' },
  { id: 'audit_mb_per_million', label: 'audit log on disk per million rows', unit: 'MB', kind: 'cost' },
];

/** The scale run: every size in turn, one dialect. `out.scale` receives the full result. */
export async function scaleScenario(
  plan: Plan,
  options: ScaleOptions,
  out: { scale?: ScaleResult },
): Promise<Metric[]> {
  const { sizes, dialect } = options;
  if (dialect === 'postgres' && !postgresAvailable())
    throw new Error('--dialect postgres: the PostgreSQL server binaries are not installed');
  // Two-second windows: three rounds of them settle a figure better than one longer window.
  const seconds = plan.quick ? 1 : Math.min(plan.seconds, 2);
  const warmupSeconds = 1;
  const started: Started[] = [];
  const cleanups: (() => Promise<void>)[] = [];
  const values: Record<number, Values> = {};
  const perSize: ScaleResult['perSize'] = {};
  const plans: ScaleResult['plans'] = {};
  try {
    const tls = certificate(plan.dir);
    const receiver = await startBare({
      name: 'scale-receiver',
      dir: plan.dir,
      cpu: CLIENT_CPU,
      env: { BARE_TLS_CERT: tls.cert, BARE_TLS_KEY: tls.key, BARE_RECORD_EVENTS: '1' },
    });
    started.push(receiver);
    let postgres: PrivatePostgres | null = null;
    const servicePids: number[] = [];
    const serverEnv: Record<string, string> = { BASE_URL: SCALE_BASE_URL };
    if (dialect === 'postgres') {
      postgres = await startPostgres(SERVER_CPU);
      started.push(postgres);
      const redis = await startRedis(SERVER_CPU);
      started.push(redis);
      servicePids.push(postgres.pid, redis.pid);
      serverEnv.REDIS_URL = redis.url;
    }
    // Every size is seeded first and kept, so that the rounds can visit the sizes in turn.
    const seeded: Seeded[] = [];
    // PostgreSQL's databases go with its data directory when it stops.
    cleanups.push(async () => {
      for (const { dir } of seeded) fs.rmSync(dir, { recursive: true, force: true });
    });
    // PostgreSQL loads on every CPU with room for its WAL, then goes back to the server's CPU for the rounds.
    const loaded = await postgres?.bulkLoad();
    for (const size of sizes) seeded.push(await seedSize(plan, size, postgres, perSize));
    await loaded?.();
    // Each size's server, kept from its first visit to the end: before the databases go.
    cleanups.push(async () => {
      for (const { served } of seeded) await served.server?.stop();
    });
    // Rounds: each visits every size, starting one size later than the round before, so that the
    // machine's drift over the run does not fall on one size; a figure is its median over the rounds.
    const rounds = plan.quick ? 1 : Math.min(plan.rounds, SCALE_ROUNDS);
    const deliveryRate: { highest?: number } = {};
    const measuredRounds: Record<number, Values[]> = Object.fromEntries(sizes.map((size) => [size, []]));
    for (let round = 0; round < rounds; round++) {
      for (let k = 0; k < seeded.length; k++) {
        const visited = seeded[(k + round) % seeded.length];
        const { size, dir, env, fixtures, deepLinks, footprint, served } = visited;
        plan.log(`== round ${round + 1} of ${rounds}: ${sizeLabel(size)} rows of each kind (${dialect})`);
        const measured = await measureSize({
          plan,
          size,
          dir,
          env,
          fixtures,
          audit: (fixtures as { audit?: number }).audit !== 0,
          servicePids,
          serverEnv,
          receiver: { url: receiver.url, pid: receiver.pid, caFile: tls.cert },
          seconds,
          warmupSeconds,
          purge: round === 0,
          deepLinks,
          deliveryRate,
          served,
        });
        measuredRounds[size].push({
          ...measured.values,
          deliveries_mb_per_million: (footprint.deliveriesBytesPerMillion as number) / 1e6,
          audit_mb_per_million:
            footprint.auditBytesPerMillion === null ? null : (footprint.auditBytesPerMillion as number) / 1e6,
        });
        ((perSize[size].rounds ??= []) as unknown[]).push(measured.details);
        if (round === 0) await planSize(plan, visited, plans);
      }
    }
    for (const size of sizes) values[size] = medianValues(measuredRounds[size]);
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup();
    for (const s of started.reverse()) await s.stop();
  }
  const figures: Figure[] = FIGURES.map((figure) => ({
    ...figure,
    values: Object.fromEntries(sizes.map((size) => [size, values[size]?.[figure.id] ?? null])),
  }));
  const label = dialect === 'postgres' ? 'PostgreSQL + Redis' : 'SQLite';
  out.scale = {
    dialect,
    sizes,
    figures,
    perSize,
    plans,
    table: ratioTable(figures, sizes, label),
    svg: ratioSvg(
      figures,
      sizes,
      `Cost at each size ÷ cost at ${sizeLabel(sizes[0])}, ${label} (${plan.quick ? 'quick run' : 'full run'})`,
    ),
  };
  return scaleMetrics(figures, sizes, dialect);
}

/** A seeded size, kept for the rounds. */
interface Seeded {
  size: number;
  dir: string;
  env: NodeJS.ProcessEnv;
  fixtures: Fixtures;
  fixturesFile: string;
  footprint: Record<string, unknown>;
  deepLinks: DeepLinks;
  served: SizeContext['served'];
}

/** Seeds one size's database and reads its footprint. */
async function seedSize(
  plan: Plan,
  size: number,
  postgres: PrivatePostgres | null,
  perSize: ScaleResult['perSize'],
): Promise<Seeded> {
  const dir = path.join(plan.dir, `scale-${size}`);
  fs.mkdirSync(dir);
  const databaseUrl = postgres
    ? await postgres.createDatabase(`scale_${size}`)
    : `sqlite:${path.join(dir, 'scale.sqlite3')}`;
  const env = serviceEnv(dir, databaseUrl, { BASE_URL: SCALE_BASE_URL, LOG_LEVEL: 'warn' });
  plan.log(`== ${sizeLabel(size)} rows of each kind (${postgres ? 'postgres' : 'sqlite'}): seeding`);
  const t0 = performance.now();
  const fixturesFile = path.join(dir, 'fixtures.json');
  await child('bench/scale/seed.ts', [String(size), fixturesFile], env);
  const seedSeconds = (performance.now() - t0) / 1000;
  const [footprint] = await child('bench/scale/inproc.ts', [JSON.stringify({ mode: 'sizes' })], env);
  plan.log(
    `${size}: seeded in ${seedSeconds.toFixed(0)} s; ${((footprint.databaseBytes as number) / 2 ** 20).toFixed(0)} MiB`,
  );
  perSize[size] = { seedSeconds, footprint };
  return {
    size,
    dir,
    env,
    fixtures: JSON.parse(fs.readFileSync(fixturesFile, 'utf8')) as Fixtures,
    fixturesFile,
    footprint,
    deepLinks: {},
    served: {},
  };
}

/** The query plans of every measured path. After the size's first round: its purges delete the expired rows. */
async function planSize(plan: Plan, { size, env, fixturesFile }: Seeded, plans: ScaleResult['plans']): Promise<void> {
  const [planned] = await child('bench/scale/plans.ts', [fixturesFile], { ...env, SERVICE_WEBHOOKS_ENABLED: 'true' });
  plans[size] = planned;
  const flagged = Object.entries(planned as Record<string, { flags: string[] }[]>).flatMap(([name, list]) =>
    list.filter((p) => p.flags.length).map((p) => `${name}: ${p.flags.join('; ')}`),
  );
  plan.log(
    `${size}: query plans: ${flagged.length ? `${flagged.length} flagged\n  ${flagged.join('\n  ')}` : 'no full scan or sort'}`,
  );
}

/** Each figure's median over the rounds that measured it (null when none did). */
function medianValues(rounds: Values[]): Values {
  const ids = new Set(rounds.flatMap((round) => Object.keys(round)));
  return Object.fromEntries(
    [...ids].map((id) => [
      id,
      median(rounds.map((round) => round[id]).filter((v): v is number => typeof v === 'number')),
    ]),
  );
}

/** BASE_URL of the seed and the server alike: OAuth access tokens are bound to it (their audience). */
const SCALE_BASE_URL = 'http://127.0.0.1';
