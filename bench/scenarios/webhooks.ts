// Webhook delivery throughput: deliveries per worker against a raw undici.request POST loop (same
// run, same HTTPS POST sink on the other CPU) at several concurrencies, on SQLite and on PostgreSQL,
// and deliveries signed ÷ unsigned per CPU-second. The deliveries run in child processes
// (bench/scenarios/webhook-child.ts); latency and the burst are bench/scenarios/webhook-latency.ts.
import fs from 'node:fs';
import path from 'node:path';
import { startBare, type AppServer } from '../lib/app-server.ts';
import type { Started } from '../lib/processes.ts';
import { notAvailable, type Metric } from '../lib/report.ts';
import { overRounds } from '../lib/ratios.ts';
import { postgresAvailable, startPostgres } from '../lib/services.ts';
import { median } from '../lib/stats.ts';
import { CLIENT_CPU, CONTENTION_LIMIT_CORES, SERVER_CPU } from '../lib/wrk.ts';
import type { Plan } from '../run.ts';
import { available, certificate, child, webhookEnv, type Line } from './webhook-child.ts';

// The table judges SQLite at 1, 8 and 32 and PostgreSQL at 8 (bench/lib/targets.ts); 128 shows
// where the engine's rate turns down, and is reported only.
const CONCURRENCIES = [1, 8, 32, 128];
/** --quick proves the harness in CI: two concurrencies. */
const QUICK_CONCURRENCIES = [8, 32];
const SIGNING_CONCURRENCY = 32;

export async function webhookScenarios(plan: Plan): Promise<Metric[]> {
  const missing = available();
  const CONCURRENCIES_RUN = plan.quick ? QUICK_CONCURRENCIES : CONCURRENCIES;
  const labels = {
    sqlite: (c: number) => `webhook deliveries/s, one worker, SQLite, concurrency ${c} ÷ raw undici POST loop`,
    pg: (c: number) => `same, PostgreSQL, concurrency ${c}`,
    signing: `webhook deliveries signed ÷ unsigned, one worker (SQLite, concurrency ${SIGNING_CONCURRENCY}), deliveries per CPU-second, alternating windows of one and two signatures (a rotation's overlap) in one process`,
  };
  if (missing) {
    return [
      ...CONCURRENCIES_RUN.map((c) => notAvailable(`deliveries_sqlite_c${c}`, labels.sqlite(c), missing)),
      notAvailable('signing', labels.signing, missing),
    ];
  }
  const dir = path.join(plan.dir, 'webhooks');
  fs.mkdirSync(dir);
  const started: Started[] = [];
  const metrics: Metric[] = [];
  try {
    const tls = certificate(dir);
    const receiver: AppServer = await startBare({
      name: 'receiver',
      dir,
      cpu: CLIENT_CPU,
      env: { BARE_TLS_CERT: tls.cert, BARE_TLS_KEY: tls.key },
    });
    started.push(receiver);
    const sqliteDir = path.join(dir, 'sqlite');
    fs.mkdirSync(sqliteDir);
    const envs: Record<string, NodeJS.ProcessEnv> = {
      sqlite: webhookEnv(sqliteDir, `sqlite:${path.join(sqliteDir, 'bench.sqlite3')}`, tls.cert),
    };
    if (postgresAvailable()) {
      const postgres = await startPostgres(SERVER_CPU);
      started.push(postgres);
      const pgDir = path.join(dir, 'pg');
      fs.mkdirSync(pgDir);
      envs.pg = webhookEnv(pgDir, await postgres.createDatabase('deliveries'), tls.cert);
    }
    const base = {
      receiverUrl: receiver.url,
      caFile: tls.cert,
      seconds: plan.quick ? 1 : 3,
      warmupSeconds: plan.quick ? 0.5 : plan.warmupSeconds,
      serverPids: [receiver.pid],
    };

    // Throughput: per round, the engine on each database and the raw loop, in rotating order.
    const kinds = ['raw', ...Object.keys(envs)];
    const rounds: Record<string, Line[]>[] = [];
    // Fewer rounds than the HTTP figures: each round here is four child processes and ~1 minute.
    const wantedRounds = plan.quick ? 1 : Math.min(3, plan.rounds);
    for (let round = 0; round < (plan.quick ? 1 : wantedRounds + 2); round++) {
      const results: Record<string, Line[]> = {};
      for (let i = 0; i < kinds.length; i++) {
        const kind = kinds[(i + round) % kinds.length];
        const concurrencies = CONCURRENCIES_RUN.map(
          (_, j) => CONCURRENCIES_RUN[(j + round) % CONCURRENCIES_RUN.length],
        );
        results[kind] =
          kind === 'raw'
            ? await child(plan, envs.sqlite, { ...base, mode: 'raw', concurrencies })
            : await child(plan, envs[kind], { ...base, mode: 'engine', concurrencies });
      }
      const signingConfig = {
        ...base,
        concurrencies: [SIGNING_CONCURRENCY],
        pairs: plan.quick ? 5 : 20,
        windowMs: 300,
      };
      results.signing = await child(plan, envs.sqlite, { ...signingConfig, mode: 'signing' });
      results.signingRaw = await child(plan, envs.sqlite, { ...signingConfig, mode: 'signing-raw' });
      rounds.push(results);
      const clean = rounds.filter((r) =>
        Object.values(r).every((lines) => lines.every((l) => l.otherCores <= CONTENTION_LIMIT_CORES)),
      ).length;
      if (clean >= wantedRounds) break;
      if (rounds.length >= wantedRounds && plan.quick) break;
    }
    const at = (lines: Line[], c: number) => lines.find((l) => l.concurrency === c)!;
    const ratioOf = (id: string, label: string, subject: string, subjectC: number, baseKey: string, baseC: number) => {
      const usable = rounds.filter((r) => r[subject] && r[baseKey]);
      const clean = usable.filter(
        (r) =>
          at(r[subject], subjectC).otherCores <= CONTENTION_LIMIT_CORES &&
          at(r[baseKey], baseC).otherCores <= CONTENTION_LIMIT_CORES,
      );
      const chosen = clean.length ? clean : usable;
      const ratios = chosen.map((r) => at(r[subject], subjectC).rate / at(r[baseKey], baseC).rate);
      return {
        id,
        label,
        value: median(chosen.map((r) => at(r[subject], subjectC).rate)),
        unit: '/s',
        baseline: median(chosen.map((r) => at(r[baseKey], baseC).rate)),
        baselineLabel: baseKey === 'raw' ? 'raw loop' : 'unsigned',
        ...overRounds(ratios),
        rounds: clean.length,
        dropped: usable.length - clean.length,
      } satisfies Metric;
    };
    for (const c of CONCURRENCIES_RUN)
      metrics.push(ratioOf(`deliveries_sqlite_c${c}`, labels.sqlite(c), 'sqlite', c, 'raw', c));
    for (const c of CONCURRENCIES_RUN) {
      metrics.push(
        envs.pg
          ? ratioOf(`deliveries_pg_c${c}`, labels.pg(c), 'pg', c, 'raw', c)
          : notAvailable(`deliveries_pg_c${c}`, labels.pg(c), 'PostgreSQL not installed'),
      );
    }
    {
      // The delivery engine with one and two signatures per delivery, interleaved in one process
      // (bench/inproc/webhooks.ts, signing), a signature's cost being the difference: per round, the
      // median over window pairs of the worker's deliveries per CPU-second, signed ÷ unsigned; the
      // rounds' median is the figure.
      const lines = rounds.map((r) => r.signing[0]);
      const clean = lines.filter((l) => l.otherCores <= CONTENTION_LIMIT_CORES);
      const chosen = clean.length ? clean : lines;
      const ratios = chosen.map((l) => l.cpuRatio);
      const signCostUs = median(chosen.map((l) => l.signedCpuUs - l.unsignedCpuUs))!;
      // Secondary, no target: the same comparison on the raw POST loop (signing against a bare POST).
      const rawLines = rounds.map((r) => r.signingRaw[0]);
      const rawRatio = median(rawLines.map((l) => l.cpuRatio))!;
      const rawCostUs = median(rawLines.map((l) => l.signedCpuUs - l.unsignedCpuUs))!;
      metrics.push({
        id: 'signing',
        label: labels.signing,
        value: median(chosen.map((l) => 1e6 / l.signedCpuUs)),
        unit: '/CPU-s',
        baseline: median(chosen.map((l) => 1e6 / l.unsignedCpuUs)),
        baselineLabel: 'unsigned',
        ...overRounds(ratios),
        rounds: clean.length,
        dropped: lines.length - clean.length,
        note:
          `wall-clock rate ratio ${median(chosen.map((l) => l.rateRatio))!.toFixed(3)}; signing costs ${signCostUs.toFixed(1)} µs of CPU per delivery ` +
          `(${median(chosen.map((l) => l.unsignedCpuUs))!.toFixed(0)} → ${median(chosen.map((l) => l.signedCpuUs))!.toFixed(0)} µs); ` +
          `raw POST loop signed ÷ unsigned ${rawRatio.toFixed(3)} per CPU-second (${rawCostUs.toFixed(1)} µs per POST; not a target)`,
      });
    }

    return metrics;
  } finally {
    for (const s of started.reverse()) await s.stop();
  }
}
