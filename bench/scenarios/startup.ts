// Startup (spawn → listening) with hyperfine, and RSS at listen with /usr/bin/time, for the
// production build and for a bare node:http server. Both are started with a preload that exits
// as soon as the server listens (bench/lib/exit-on-listen.mjs).
import fs from 'node:fs';
import path from 'node:path';
import { serviceEnv } from '../lib/app-server.ts';
import { CpuProbe } from '../lib/proc.ts';
import { NODE, ROOT, commandExists, run, runAsync } from '../lib/processes.ts';
import { notAvailable, type Metric } from '../lib/report.ts';
import { overRounds } from '../lib/ratios.ts';
import { median } from '../lib/stats.ts';
import { CONTENTION_LIMIT_CORES, SERVER_CPU } from '../lib/wrk.ts';
import type { Plan } from '../run.ts';

export async function startupScenarios(plan: Plan): Promise<Metric[]> {
  const dir = path.join(plan.dir, 'startup');
  fs.mkdirSync(dir);
  const env = { ...serviceEnv(dir, `sqlite:${path.join(dir, 'bench.sqlite3')}`), PORT: '0' };
  // The database exists and is migrated, as on any restart: startup is not a first install.
  run(NODE, [path.join(ROOT, 'dist/main.js'), 'migrate'], { env });
  const preload = path.join(ROOT, 'bench/lib/exit-on-listen.mjs');
  const commands: Record<string, string[]> = {
    app: [
      'taskset',
      '-c',
      String(SERVER_CPU),
      NODE,
      '--import',
      preload,
      path.join(ROOT, 'dist/main.js'),
      'serve',
      '--no-worker',
    ],
    bare: [
      'taskset',
      '-c',
      String(SERVER_CPU),
      NODE,
      '--import',
      preload,
      path.join(ROOT, 'bench/servers/bare-http.mjs'),
    ],
  };
  const metrics: Metric[] = [];

  if (!commandExists('hyperfine')) {
    metrics.push(notAvailable('startup', 'startup, spawn → listening', 'hyperfine not installed'));
  } else {
    const runs = plan.quick ? 3 : 6;
    const warmups = plan.quick ? 1 : 2;
    const rounds: { app: number; bare: number; clean: boolean }[] = [];
    for (let round = 0; round < plan.rounds; round++) {
      const order = round % 2 ? ['bare', 'app'] : ['app', 'bare'];
      const out = path.join(dir, `hyperfine-${round}.json`);
      const args = ['-N', '--warmup', String(warmups), '--runs', String(runs), '--export-json', out, '--style', 'none'];
      for (const key of order) args.push('-n', key, commands[key].join(' '));
      const probe = new CpuProbe([]).start();
      const result = await runAsync('hyperfine', args, { env });
      const cpu = probe.stop();
      if (result.code !== 0) throw new Error(`hyperfine failed:\n${result.stdout}\n${result.stderr}`);
      const parsed = JSON.parse(fs.readFileSync(out, 'utf8')) as {
        results: { command: string; median: number; exit_codes: number[] }[];
      };
      const by = Object.fromEntries(parsed.results.map((r) => [r.command, r]));
      for (const key of order) {
        if (by[key].exit_codes.some((c) => c !== 0)) throw new Error(`${key} did not start cleanly under hyperfine`);
      }
      rounds.push({
        app: by.app.median * 1000,
        bare: by.bare.median * 1000,
        clean: cpu.otherCores <= CONTENTION_LIMIT_CORES,
      });
      plan.log(
        `startup round ${round + 1}: app ${(by.app.median * 1000).toFixed(0)} ms, bare ${(by.bare.median * 1000).toFixed(0)} ms${cpu.otherCores > CONTENTION_LIMIT_CORES ? ` (other ${cpu.otherCores.toFixed(2)} cores)` : ''}`,
      );
    }
    const clean = rounds.filter((r) => r.clean);
    const chosen = clean.length ? clean : rounds;
    const ratios = chosen.map((r) => r.app / r.bare);
    metrics.push({
      id: 'startup',
      label: 'startup, spawn → listening (hyperfine median)',
      value: median(chosen.map((r) => r.app)),
      unit: 'ms',
      baseline: median(chosen.map((r) => r.bare)),
      baselineLabel: 'bare',
      ...overRounds(ratios),
      rounds: clean.length,
      dropped: rounds.length - clean.length,
      details: { rounds },
    });
  }

  // RSS at listen: /usr/bin/time's maximum resident set of a process that exits on listening.
  if (!fs.existsSync('/usr/bin/time')) {
    metrics.push(notAvailable('rss', 'RSS at listen', '/usr/bin/time not installed'));
  } else {
    const samples: Record<string, number[]> = { app: [], bare: [] };
    for (let i = 0; i < (plan.quick ? 2 : 7); i++) {
      for (const key of i % 2 ? ['bare', 'app'] : ['app', 'bare']) {
        const [command, ...args] = commands[key];
        const result = await runAsync('/usr/bin/time', ['-f', 'MAXRSS %M', command, ...args], { env });
        const match = /MAXRSS (\d+)/.exec(result.stderr);
        if (result.code !== 0 || !match) throw new Error(`RSS probe of ${key} failed:\n${result.stderr}`);
        samples[key].push(Number(match[1]) / 1024);
      }
    }
    const ratios = samples.app.map((a, i) => a / samples.bare[i]);
    metrics.push({
      id: 'rss',
      label: 'RSS at listen (/usr/bin/time max RSS)',
      value: median(samples.app),
      unit: 'MiB',
      baseline: median(samples.bare),
      baselineLabel: 'bare',
      ...overRounds(ratios),
      rounds: ratios.length,
      dropped: 0,
      details: samples,
    });
  }
  return metrics;
}
