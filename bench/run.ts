// `npm run bench` (full: warm-up 3 s, ≥ 5 clean rounds of 5 s) and `npm run bench -- --quick`
// (one round each, what CI runs to prove the harness works). Every figure is reported beside its
// baseline measured in the same run, as a ratio; rounds disturbed by other processes are dropped
// and counted. The figures issue 32's table names are judged against it (bench/lib/targets.ts), the
// others reported. Writes bench/results/<date>.json and prints a Markdown table.
// `npm run bench -- scale [--sizes 1k,10k,100k,1m] [--dialect sqlite|postgres]` runs the scale
// scenario alone (bench/scenarios/scale.ts): bench/results/<date>-scale-<dialect>.json and .svg.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ensureBuild } from './lib/build.ts';
import { NODE, ROOT, commandExists, stopAll, tempDir } from './lib/processes.ts';
import { markdownTable, notAvailable, type Metric } from './lib/report.ts';
import { judgeAgainstTable, tableSummary } from './lib/targets.ts';
import { CLIENT_CPU } from './lib/wrk.ts';
import { httpScenarios } from './scenarios/http.ts';
import { issuanceScenarios } from './scenarios/issuance.ts';
import { mcpScenarios } from './scenarios/mcp.ts';
import { startupScenarios } from './scenarios/startup.ts';
import { webhookScenarios } from './scenarios/webhooks.ts';
import { webhookLatencyScenarios } from './scenarios/webhook-latency.ts';
import { snsScenarios } from './scenarios/sns.ts';
import { metricsScenarios } from './scenarios/metrics.ts';
import { patCacheScenarios } from './scenarios/pat-cache.ts';
import { parseSizes, scaleScenario, type ScaleResult } from './scenarios/scale.ts';

export interface Plan {
  quick: boolean;
  /** Rounds wanted (clean ones, in a full run). */
  rounds: number;
  /** Upper bound of rounds, dropped ones included. */
  maxRounds: number;
  seconds: number;
  warmupSeconds: number;
  dir: string;
  log(line: string): void;
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    'no-build': { type: 'boolean', default: false },
    out: { type: 'string' },
    // Development of the harness itself: a full run's logic with fewer/shorter rounds.
    rounds: { type: 'string' },
    seconds: { type: 'string' },
    // The scale scenario only.
    sizes: { type: 'string', default: '1k,10k,100k,1m' },
    dialect: { type: 'string', default: 'sqlite' },
  },
});
const scale = positionals[0] === 'scale';
if (positionals.length > (scale ? 1 : 0))
  throw new Error(`unknown argument ${positionals.join(' ')}: the one scenario named by argument is scale`);
if (values.dialect !== 'sqlite' && values.dialect !== 'postgres') throw new Error('--dialect is sqlite or postgres');

const started = Date.now();
const log = (line: string) =>
  process.stderr.write(`[bench ${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}\n`);

async function main() {
  const quick = values.quick;
  for (const tool of ['wrk', 'taskset']) {
    if (!commandExists(tool)) throw new Error(`${tool} is required (apt-get install -y wrk; taskset is in util-linux)`);
  }
  if (os.cpus().length < 2)
    throw new Error('the harness pins the server and the client to two different CPUs: it needs at least 2');
  ensureBuild(log, values['no-build']);
  // The harness itself (mostly idle) stays on the client's CPU, away from the server under test.
  spawnSync('taskset', ['-a', '-p', '-c', String(CLIENT_CPU), String(process.pid)], { stdio: 'ignore' });
  const dir = tempDir('svc-bench-');
  const plan: Plan = {
    quick,
    rounds: quick ? 1 : 5,
    maxRounds: quick ? 1 : 8,
    seconds: quick ? 2 : 5,
    warmupSeconds: quick ? 1 : 3,
    dir,
    log,
  };
  if (values.rounds) {
    plan.rounds = Number(values.rounds);
    plan.maxRounds = plan.rounds + 1;
  }
  if (values.seconds) plan.seconds = Number(values.seconds);
  log(`${quick ? 'quick' : 'full'} run in ${dir}`);
  const only = values.only?.split(',');
  const want = (name: string) => !only || only.includes(name);
  let metrics: Metric[] = [];
  const extra: { scale?: ScaleResult } = {};
  const scaleOptions = { sizes: parseSizes(values.sizes!), dialect: values.dialect as 'sqlite' | 'postgres' };
  const sections: [string, (p: Plan) => Promise<Metric[]>][] = scale
    ? [['scale', (p) => scaleScenario(p, scaleOptions, extra)]]
    : [
        ['http', httpScenarios],
        ['issuance', issuanceScenarios],
        ['metrics', metricsScenarios],
        ['pat-cache', patCacheScenarios],
        ['mcp', mcpScenarios],
        ['webhooks', webhookScenarios],
        ['webhook-latency', webhookLatencyScenarios],
        ['sns', snsScenarios],
        ['startup', startupScenarios],
      ];
  // A failing section (an error answer, a failed delivery, a crash) fails the run, but only after
  // the other sections have run and the results are written: one broken figure costs no other.
  const failures: string[] = [];
  for (const [name, section] of sections) {
    if (!want(name)) continue;
    log(`== ${name}`);
    try {
      metrics.push(...(await section(plan)));
    } catch (error) {
      const message = (error as Error).message ?? String(error);
      log(`section ${name} FAILED: ${(error as Error).stack ?? error}`);
      failures.push(`${name}: ${message}`);
      metrics.push({
        ...notAvailable(`failed_${name}`, `section ${name}`, 'failed'),
        verdict: 'FAIL',
        note: `FAILED: ${message.split('\n')[0].slice(0, 200)}`,
      });
    }
  }
  fs.rmSync(dir, { recursive: true, force: true });
  // The scale run judges its growth ratios itself; every other figure is judged here, in one place.
  if (!scale) metrics = judgeAgainstTable(metrics);

  const node = spawnSync(NODE, ['-v'], { encoding: 'utf8' }).stdout.trim();
  const wrkVersion = spawnSync('wrk', ['-v'], { encoding: 'utf8' }).stdout.split('\n', 1)[0];
  const result = {
    date: new Date().toISOString(),
    mode: quick ? 'quick' : 'full',
    machine: {
      cpu: os.cpus()[0]?.model,
      cpus: os.cpus().length,
      memoryGiB: Math.round(os.totalmem() / 2 ** 30),
      kernel: os.release(),
      node,
      wrk: wrkVersion,
    },
    method: {
      wrk: 'one thread pinned to CPU 1, 50 connections, server under test pinned to CPU 0',
      rounds: plan.rounds,
      secondsPerMeasurement: plan.seconds,
      warmupSeconds: plan.warmupSeconds,
      contentionLimitCores: 0.1,
    },
    durationSeconds: Math.round((Date.now() - started) / 1000),
    failures,
    metrics,
    ...(extra.scale ? { scale: { ...extra.scale, svg: undefined } } : {}),
  };
  const table = markdownTable(metrics) + (extra.scale ? `\n\n${extra.scale.table}` : `\n\n${tableSummary(metrics)}`);
  // A partial run (some sections, or fewer or shorter rounds) never replaces the day's full results.
  const partial = [
    ...(scale ? ['scale', scaleOptions.dialect] : []),
    ...(only ?? []),
    ...(values.rounds || values.seconds ? ['dev'] : []),
  ]
    .map((part) => `-${part}`)
    .join('');
  const outFile =
    values.out ??
    path.join(ROOT, 'bench/results', `${result.date.slice(0, 10)}${quick ? '-quick' : ''}${partial}.json`);
  fs.mkdirSync(path.dirname(outFile), { recursive: true });
  fs.writeFileSync(outFile, JSON.stringify(result, null, 2) + '\n');
  if (extra.scale) fs.writeFileSync(outFile.replace(/\.json$/, '') + '.svg', extra.scale.svg);
  // The exit code says whether the harness worked (a section failed: 1), not whether the figures meet
  // their musts: CI runs the quick run on a shared machine and does not gate on its ratios.
  if (failures.length) process.exitCode = 1;
  process.stdout.write(
    `\n${quick ? 'Quick' : 'Full'} run, ${result.date}, ${result.machine.cpu} × ${result.machine.cpus}, Node ${node}, ${result.durationSeconds} s\n\n${table}\n\nwritten to ${path.relative(ROOT, outFile)}\n`,
  );
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void stopAll().finally(() => process.exit(130));
  });
}

try {
  await main();
} catch (error) {
  log(`FAILED: ${(error as Error).stack ?? error}`);
  await stopAll();
  process.exitCode = 1;
}
