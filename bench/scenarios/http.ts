// HTTP scenarios measured with wrk against the production build: GET /api/v1/me/ with rotating
// PATs in SQLite mode (logging on and off), in PostgreSQL + Redis mode and paced at ~10k req/s,
// each round against a bare node:http server in the same run. Paced while tokens are issued:
// bench/scenarios/issuance.ts.
import fs from 'node:fs';
import path from 'node:path';
import {
  SEED_TOKENS_PER_USER,
  SEED_USERS,
  seedTokens,
  startAppServer,
  startBare,
  type AppServer,
  preflight,
} from '../lib/app-server.ts';
import type { Started } from '../lib/processes.ts';
import { pauseTrees } from '../lib/proc.ts';
import { notAvailable, type Metric } from '../lib/report.ts';
import { overRounds } from '../lib/ratios.ts';
import { startPostgres, startRedis, postgresAvailable } from '../lib/services.ts';
import { median } from '../lib/stats.ts';
import { SERVER_CPU, wrk, type WrkResult } from '../lib/wrk.ts';
import type { Plan } from '../run.ts';
import { issuanceAvailable } from './issuance.ts';

/** Mean per-connection pause that paces 50 connections at about 10k requests/s (drawn at random: bench/wrk/requests.lua). */
const PACED_DELAY_MS = 5;

export interface Sample {
  round: number;
  results: Record<string, WrkResult>;
}

/** Values of clean rounds; when none is clean (quick runs on a busy machine), all of them, flagged. */
export function cleanOrAll(samples: Sample[], keys: string[]) {
  const clean = samples.filter((s) => keys.every((k) => s.results[k]?.clean));
  const usable = samples.filter((s) => keys.every((k) => s.results[k]));
  return { chosen: clean.length ? clean : usable, clean: clean.length, dropped: usable.length - clean.length };
}

export function ratioMetric(
  samples: Sample[],
  id: string,
  label: string,
  subject: string,
  base: string,
  baselineLabel: string,
  value: (r: WrkResult) => number,
  unit: string,
  inverse = false,
): Metric {
  const { chosen, clean, dropped } = cleanOrAll(samples, [subject, base]);
  const ratios = chosen.map((s) =>
    inverse ? value(s.results[base]) / value(s.results[subject]) : value(s.results[subject]) / value(s.results[base]),
  );
  const pick = (key: string, f: (r: WrkResult) => number) => median(chosen.map((s) => f(s.results[key])));
  return {
    id,
    label,
    value: pick(subject, value),
    unit,
    baseline: pick(base, value),
    baselineLabel,
    ...overRounds(ratios),
    rounds: clean,
    dropped,
    details: {
      perRound: chosen.map((s) => ({
        round: s.round,
        ratio: inverse
          ? value(s.results[base]) / value(s.results[subject])
          : value(s.results[subject]) / value(s.results[base]),
      })),
      [subject]: summarize(chosen.map((s) => s.results[subject])),
      [base]: summarize(chosen.map((s) => s.results[base])),
    },
  };
}

export function summarize(results: WrkResult[]) {
  const m = (f: (r: WrkResult) => number) => median(results.map(f));
  return {
    rps: m((r) => r.rps),
    p50Ms: m((r) => r.p50Ms),
    p90Ms: m((r) => r.p90Ms),
    p99Ms: m((r) => r.p99Ms),
    cpuUsPerRequest: m((r) => r.cpuUsPerRequest),
    otherCores: results.map((r) => Math.round(r.otherCores * 1000) / 1000),
  };
}

export async function httpScenarios(plan: Plan): Promise<Metric[]> {
  const dir = plan.dir;
  const started: Started[] = [];
  try {
    // Seed once with the service's functions, then give each SQLite server its own copy of the file
    // (a second process writing the same file would invalidate the other's caches).
    const seedDir = path.join(dir, 'sqlite-seed');
    fs.mkdirSync(seedDir);
    const tokensFile = path.join(dir, 'tokens.txt');
    plan.log(`seeding ${SEED_USERS * SEED_TOKENS_PER_USER} PATs for ${SEED_USERS} users (SQLite)`);
    seedTokens(seedDir, `sqlite:${path.join(seedDir, 'bench.sqlite3')}`, tokensFile);
    const tokens = fs.readFileSync(tokensFile, 'utf8').trim().split('\n');
    const sqliteServer = async (name: string, env: Record<string, string> = {}) => {
      const serverDir = path.join(dir, name);
      fs.cpSync(seedDir, serverDir, { recursive: true });
      const server = await startAppServer({
        name,
        dataDir: serverDir,
        databaseUrl: `sqlite:${path.join(serverDir, 'bench.sqlite3')}`,
        cpu: SERVER_CPU,
        env,
      });
      started.push(server);
      return server;
    };
    const servers: Record<string, AppServer> = {};
    servers.sqlite = await sqliteServer('sqlite');
    servers.sqlite_nolog = await sqliteServer('sqlite_nolog', { LOG_LEVEL: 'silent' });
    const pids: Record<string, number[]> = { sqlite: [servers.sqlite.pid], sqlite_nolog: [servers.sqlite_nolog.pid] };

    let pgNote: string | null = null;
    if (!postgresAvailable()) pgNote = 'PostgreSQL binaries not installed';
    else {
      const postgres = await startPostgres(SERVER_CPU);
      started.push(postgres);
      const redis = await startRedis(SERVER_CPU);
      started.push(redis);
      const pgDir = path.join(dir, 'pg');
      fs.mkdirSync(pgDir);
      const databaseUrl = await postgres.createDatabase('bench');
      plan.log('seeding PATs (PostgreSQL)');
      const pgTokens = path.join(dir, 'tokens-pg.txt');
      seedTokens(pgDir, databaseUrl, pgTokens);
      servers.pg = await startAppServer({
        name: 'pg',
        dataDir: pgDir,
        databaseUrl,
        cpu: SERVER_CPU,
        env: { REDIS_URL: redis.url },
      });
      started.push(servers.pg);
      pids.pg = [servers.pg.pid, postgres.pid, redis.pid];
      await preflight(servers.pg.url, fs.readFileSync(pgTokens, 'utf8').split('\n', 1)[0]);
    }
    const tokensFor = (key: string) => (key === 'pg' ? path.join(dir, 'tokens-pg.txt') : tokensFile);

    const size = await preflight(servers.sqlite.url, tokens[0]);
    await preflight(servers.sqlite_nolog.url, tokens[0]);
    servers.bare = await startBare({ name: 'bare', dir, cpu: SERVER_CPU, env: { BARE_BODY_BYTES: String(size) } });
    started.push(servers.bare);
    pids.bare = [servers.bare.pid];
    const bareSize = await preflight(servers.bare.url, tokens[0]);
    if (bareSize !== size) throw new Error(`bare body is ${bareSize} bytes, /api/v1/me/ is ${size}`);
    // Both SQLite servers answer one token issuance before the warm-up, as production servers answer
    // requests of other kinds: one request of another kind before the warm-up (an issuance, or even
    // one 400) leaves a server's /me/ dearer in CPU for good, and the logging figure compares two
    // servers that differ in LOG_LEVEL only (docs/performance.md, Method, "Same history").
    await issuanceAvailable(servers.sqlite.url);
    await issuanceAvailable(servers.sqlite_nolog.url);

    const closedLoop = Object.keys(servers);
    // Every server but the measured one is stopped while it is measured: all are pinned to the same
    // core, and an idle one still runs its timers there (docs/performance.md, Method, "Stopped servers").
    const measure = async (key: string, seconds: number, delayMs = 0) => {
      const resume = pauseTrees(Object.entries(pids).flatMap(([other, list]) => (other === key ? [] : list)));
      try {
        return await wrk({
          url: `${servers[key].url}/api/v1/me/`,
          seconds,
          serverPids: pids[key],
          tokensFile: tokensFor(key),
          delayMs,
        });
      } finally {
        resume();
      }
    };

    plan.log(`warm-up ${plan.warmupSeconds} s each: ${closedLoop.join(', ')}`);
    for (const key of closedLoop) await measure(key, plan.warmupSeconds);

    const samples: Sample[] = [];
    for (let round = 0; round < plan.maxRounds; round++) {
      const results: Record<string, WrkResult> = {};
      // Rotate the order every round so that drift over time does not favour one server.
      const order = closedLoop.map((_, i) => closedLoop[(i + round) % closedLoop.length]);
      for (const key of order) results[key] = await measure(key, plan.seconds);
      const pacedOrder = round % 2 ? ['sqlite', 'bare'] : ['bare', 'sqlite'];
      for (const key of pacedOrder) results[`${key}_paced`] = await measure(key, plan.seconds, PACED_DELAY_MS);
      samples.push({ round: round + 1, results });
      const line = Object.entries(results)
        .map(
          ([k, r]) =>
            `${k} ${Math.round(r.rps)}/s p99 ${r.p99Ms.toFixed(2)}ms${r.clean ? '' : ` (other ${r.otherCores.toFixed(2)} cores)`}`,
        )
        .join('; ');
      plan.log(`round ${round + 1}: ${line}`);
      const cleanRounds = samples.filter((s) => Object.values(s.results).every((r) => r.clean)).length;
      if (round + 1 >= plan.rounds && cleanRounds >= plan.rounds) break;
      if (round + 1 >= plan.rounds && plan.quick) break;
    }

    const metrics: Metric[] = [];
    metrics.push(
      ratioMetric(
        samples,
        'me_sqlite',
        'GET /api/v1/me/ (PAT, SQLite) req/s ÷ bare node:http',
        'sqlite',
        'bare',
        'bare',
        (r) => r.rps,
        'req/s',
      ),
    );
    const paced = ratioMetric(
      samples,
      'me_sqlite_paced_p99',
      'same, p99 latency at ~10k req/s paced',
      'sqlite_paced',
      'bare_paced',
      'bare',
      (r) => r.p99Ms,
      'ms',
    );
    metrics.push({
      ...paced,
      details: {
        ...paced.details,
        rpsPaced: summarize(cleanOrAll(samples, ['sqlite_paced']).chosen.map((s) => s.results.sqlite_paced)).rps,
      },
    });
    metrics.push(
      servers.pg
        ? ratioMetric(
            samples,
            'me_pg',
            'same, PostgreSQL + Redis mode req/s ÷ bare',
            'pg',
            'bare',
            'bare',
            (r) => r.rps,
            'req/s',
          )
        : notAvailable('me_pg', 'same, PostgreSQL + Redis mode req/s ÷ bare', pgNote!),
    );
    metrics.push(
      ratioMetric(
        samples,
        'logging',
        'default request logging: req/s with it ÷ without',
        'sqlite',
        'sqlite_nolog',
        'LOG_LEVEL=silent',
        (r) => r.rps,
        'req/s',
      ),
    );
    for (const key of closedLoop) {
      const { chosen, clean, dropped } = cleanOrAll(samples, [key]);
      const s = summarize(chosen.map((x) => x.results[key]));
      metrics.push({
        id: `cpu_${key}`,
        label: `server CPU per request, ${key === 'pg' ? 'PostgreSQL + Redis (all three processes)' : key === 'bare' ? 'bare node:http' : key === 'sqlite' ? 'SQLite' : 'SQLite, logging off'} (p50/p90/p99 ${[s.p50Ms, s.p90Ms, s.p99Ms].map((x) => x?.toFixed(2)).join('/')} ms)`,
        value: s.cpuUsPerRequest,
        unit: 'µs',
        baseline: null,
        ratio: null,
        rounds: clean,
        dropped,
        details: s,
      });
    }
    return metrics;
  } finally {
    for (const s of started.reverse()) await s.stop();
  }
}
