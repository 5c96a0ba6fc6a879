// What Prometheus metrics cost the hot path: GET /api/v1/me/ (PAT, SQLite, default logging) on two
// copies of one database, one server with SERVICE_METRICS_TOKEN set and one without, measured one after
// the other in each round (the order rotating), like the logging figure. Each measurement is scraped
// once halfway through, as Prometheus would (every 15 s is usual: once in 5 s is the dearer case); the
// server without metrics answers that request 404, so both see the same requests. After each round the
// scrape must show every /me/ request wrk completed, or the figure would measure a server that records
// nothing.
import fs from 'node:fs';
import path from 'node:path';
import { request } from 'undici';
import { preflight, seedTokens, startAppServer, type AppServer } from '../lib/app-server.ts';
import type { Started } from '../lib/processes.ts';
import { pauseTrees } from '../lib/proc.ts';
import type { Metric } from '../lib/report.ts';
import { SERVER_CPU, wrk, type WrkResult } from '../lib/wrk.ts';
import type { Plan } from '../run.ts';
import { alternatingRounds } from './alternating-rounds.ts';
import { cleanOrAll, ratioMetric, summarize } from './http.ts';

const TOKEN = 'bench-metrics-token-0123456789abcdef';

/** GET /metrics with the token: the exposition (200), or null where metrics are off (404). */
async function scrape(url: string): Promise<string | null> {
  const response = await request(`${url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  const body = await response.body.text();
  if (response.statusCode === 404) return null;
  if (response.statusCode !== 200) throw new Error(`GET ${url}/metrics → ${response.statusCode}: ${body}`);
  return body;
}

/** The number of /api/v1/me/ 200s the exposition counts. */
function meCount(exposition: string): number {
  const line = exposition
    .split('\n')
    .find((l) =>
      l.startsWith('http_request_duration_seconds_count{method="GET",route="/api/v1/me/",status_code="200"}'),
    );
  return line ? Number(line.split(' ')[1]) : 0;
}

export async function metricsScenarios(plan: Plan): Promise<Metric[]> {
  const dir = plan.dir;
  const started: Started[] = [];
  try {
    const seedDir = path.join(dir, 'metrics-seed');
    fs.mkdirSync(seedDir);
    const tokensFile = path.join(dir, 'metrics-tokens.txt');
    plan.log('seeding PATs (SQLite)');
    seedTokens(seedDir, `sqlite:${path.join(seedDir, 'bench.sqlite3')}`, tokensFile);
    const token = fs.readFileSync(tokensFile, 'utf8').split('\n', 1)[0];
    const servers: Record<string, AppServer> = {};
    for (const [name, env] of [
      ['metrics_on', { SERVICE_METRICS_TOKEN: TOKEN }],
      ['metrics_off', {}],
    ] as const) {
      const serverDir = path.join(dir, name);
      fs.cpSync(seedDir, serverDir, { recursive: true });
      servers[name] = await startAppServer({
        name,
        dataDir: serverDir,
        databaseUrl: `sqlite:${path.join(serverDir, 'bench.sqlite3')}`,
        cpu: SERVER_CPU,
        env,
      });
      started.push(servers[name]);
      await preflight(servers[name].url, token);
    }
    if ((await scrape(servers.metrics_on.url)) === null)
      throw new Error('the server with SERVICE_METRICS_TOKEN answers /metrics 404: metrics are not in this build');
    await scrape(servers.metrics_off.url);
    const keys = Object.keys(servers);
    const pids = Object.fromEntries(keys.map((key) => [key, [servers[key].pid]]));

    const measure = async (key: string, seconds: number): Promise<WrkResult> => {
      const resume = pauseTrees(keys.filter((other) => other !== key).flatMap((other) => pids[other]));
      const scraped = new Promise<void>((resolve, reject) =>
        setTimeout(() => void scrape(servers[key].url).then(() => resolve(), reject), (seconds * 1000) / 2),
      );
      try {
        const [result] = await Promise.all([
          wrk({ url: `${servers[key].url}/api/v1/me/`, seconds, serverPids: pids[key], tokensFile }),
          scraped,
        ]);
        return result;
      } finally {
        resume();
      }
    };

    const samples = await alternatingRounds(plan, keys, measure, async (round) => {
      const before = meCount((await scrape(servers.metrics_on.url))!);
      const results = await round();
      const counted = meCount((await scrape(servers.metrics_on.url))!) - before;
      if (counted < results.metrics_on.requests)
        throw new Error(
          `/metrics counted ${counted} /me/ requests of the ${results.metrics_on.requests} wrk completed`,
        );
      return results;
    });
    const metrics: Metric[] = [
      ratioMetric(
        samples,
        'metrics',
        'Prometheus metrics: /me/ req/s with them ÷ without',
        'metrics_on',
        'metrics_off',
        'no metrics',
        (r) => r.rps,
        'req/s',
      ),
    ];
    const cpu = (key: string) =>
      summarize(cleanOrAll(samples, [key]).chosen.map((s) => s.results[key])).cpuUsPerRequest;
    const { clean, dropped } = cleanOrAll(samples, keys);
    metrics.push({
      id: 'cpu_metrics',
      label: 'server CPU per /me/ request, metrics on / off',
      value: cpu('metrics_on'),
      unit: 'µs',
      baseline: cpu('metrics_off'),
      baselineLabel: 'off',
      ratio: null,
      rounds: clean,
      dropped,
    });
    return metrics;
  } finally {
    for (const s of started.reverse()) await s.stop();
  }
}
