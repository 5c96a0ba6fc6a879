// Webhook delivery benchmarks: deliveries per worker against a raw undici.request POST loop (same
// run, same HTTPS POST sink on the other CPU), signed ÷ unsigned, event → first-attempt latency in
// embedded mode (SQLite, in-process worker woken on dispatch) and distributed mode (PostgreSQL, a
// separate `svc worker` woken by LISTEN/NOTIFY), and a 10,000-event burst.
import fs from 'node:fs';
import path from 'node:path';
import { serviceEnv, startBare, type AppServer } from '../lib/app-server.ts';
import { NODE, ROOT, run, runAsync, startProcess, type Started } from '../lib/processes.ts';
import { notAvailable, type Metric } from '../lib/report.ts';
import { overRounds } from '../lib/ratios.ts';
import { postgresAvailable, startPostgres, type PrivatePostgres } from '../lib/services.ts';
import { median } from '../lib/stats.ts';
import { CLIENT_CPU, CONTENTION_LIMIT_CORES, SERVER_CPU } from '../lib/wrk.ts';
import type { Plan } from '../run.ts';

const CONCURRENCIES = [1, 8, 32, 128];
/** --quick proves the harness in CI: two concurrencies, a smaller burst. */
const QUICK_CONCURRENCIES = [8, 32];
const QUICK_BURST = 2_000;
const SIGNING_CONCURRENCY = 32;
const BURST = 10_000;

function available(): string | null {
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

type Line = Record<string, number>;

async function child(plan: Plan, env: NodeJS.ProcessEnv, config: Record<string, unknown>): Promise<Line[]> {
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
      env: { ...env, BENCH_ROOT_PID: String(process.pid) },
    },
  );
  if (result.code !== 0)
    throw new Error(`webhook benchmark (${config.mode}) failed:\n${result.stderr}\n${result.stdout.slice(-2000)}`);
  const lines = result.stdout
    .split('\n')
    .filter((l) => l.startsWith('BENCH_RESULT '))
    .map((l) => JSON.parse(l.slice(13)) as Line);
  plan.log(
    `${config.mode}${env.DATABASE_URL?.startsWith('postgres') ? ' pg' : ''}: ${lines.map((l) => JSON.stringify(l)).join(' ')}`,
  );
  return lines;
}

export async function webhookScenarios(plan: Plan): Promise<Metric[]> {
  const missing = available();
  const CONCURRENCIES_RUN = plan.quick ? QUICK_CONCURRENCIES : CONCURRENCIES;
  const BURST_RUN = plan.quick ? QUICK_BURST : BURST;
  const labels = {
    sqlite: (c: number) => `webhook deliveries/s, one worker, SQLite, concurrency ${c} ÷ raw undici POST loop`,
    pg: (c: number) => `same, PostgreSQL, concurrency ${c}`,
    signing: `webhook deliveries signed ÷ unsigned, one worker (SQLite, concurrency ${SIGNING_CONCURRENCY}), deliveries per CPU-second, alternating windows of one and two signatures (a rotation's overlap) in one process`,
    latency: (r: number) =>
      `event → first attempt, embedded (SQLite), ${r.toLocaleString('en-US')} events/s paced, p99`,
    burst: `${BURST_RUN.toLocaleString('en-US')}-event burst, one worker, until every first attempt completed (warm process)`,
    distributed: (r: number) => `event → first attempt, distributed (PostgreSQL, svc worker), ${r} events/s paced, p99`,
  };
  if (missing) {
    return [
      ...CONCURRENCIES_RUN.map((c) => notAvailable(`deliveries_sqlite_c${c}`, labels.sqlite(c), missing)),
      notAvailable('signing', labels.signing, missing),
      notAvailable('latency_1000', labels.latency(1000), missing),
      notAvailable('burst', labels.burst, missing),
    ];
  }
  const dir = path.join(plan.dir, 'webhooks');
  fs.mkdirSync(dir);
  const started: Started[] = [];
  const metrics: Metric[] = [];
  try {
    const tls = certificate(dir);
    const webhookEnv = (dataDir: string, databaseUrl: string) =>
      serviceEnv(dataDir, databaseUrl, {
        SERVICE_WEBHOOKS_ENABLED: 'true',
        SERVICE_WEBHOOKS_ALLOWED_CIDRS: '127.0.0.1/32',
        NODE_EXTRA_CA_CERTS: tls.cert,
      });
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
      sqlite: webhookEnv(sqliteDir, `sqlite:${path.join(sqliteDir, 'bench.sqlite3')}`),
    };
    let postgres: PrivatePostgres | null = null;
    if (postgresAvailable()) {
      postgres = await startPostgres(SERVER_CPU);
      started.push(postgres);
      const pgDir = path.join(dir, 'pg');
      fs.mkdirSync(pgDir);
      envs.pg = webhookEnv(pgDir, await postgres.createDatabase('deliveries'));
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

    // Latency: fresh databases, a receiver that records arrival times.
    const recorder = await startBare({
      name: 'recorder',
      dir,
      cpu: CLIENT_CPU,
      env: { BARE_TLS_CERT: tls.cert, BARE_TLS_KEY: tls.key, BARE_RECORD_EVENTS: '1' },
    });
    started.push(recorder);
    const latencyDir = path.join(dir, 'latency');
    fs.mkdirSync(latencyDir);
    const latencyEnv = webhookEnv(latencyDir, `sqlite:${path.join(latencyDir, 'bench.sqlite3')}`);
    const latencyBase = { ...base, receiverUrl: recorder.url, seconds: plan.quick ? 1 : 5, serverPids: [recorder.pid] };
    const latencyMetric = (id: string, label: string, line: Line, mode: string): Metric => ({
      id,
      label,
      value: line.p99Ms,
      unit: 'ms',
      baseline: null,
      ratio: null,
      rounds: line.otherCores <= CONTENTION_LIMIT_CORES ? 1 : 0,
      dropped: line.otherCores <= CONTENTION_LIMIT_CORES ? 0 : 1,
      note: `${mode}; p50 ${line.p50Ms?.toFixed(2)} ms, max ${line.maxMs?.toFixed(1)} ms over ${line.events} events; dispatch at most ${line.maxBehindMs?.toFixed(0)} ms behind its schedule`,
      details: line,
    });
    for (const line of await child(plan, latencyEnv, { ...latencyBase, mode: 'latency', rates: [100, 1000] })) {
      metrics.push(latencyMetric(`latency_${line.rate}`, labels.latency(line.rate), line, 'embedded'));
    }
    const [burst] = await child(plan, latencyEnv, { ...latencyBase, mode: 'burst', burst: BURST_RUN });
    metrics.push({
      id: 'burst',
      label: labels.burst,
      value: burst.completedMs,
      unit: 'ms',
      baseline: null,
      ratio: null,
      rounds: burst.otherCores <= CONTENTION_LIMIT_CORES ? 1 : 0,
      dropped: burst.otherCores <= CONTENTION_LIMIT_CORES ? 0 : 1,
      note:
        `dispatch of all ${BURST_RUN} took ${burst.dispatchedMs.toFixed(0)} ms of it (${burst.deliveredWhileDispatching} delivered meanwhile); ` +
        `CPU of the process ${burst.cpuTotalMs.toFixed(0)} ms, ${burst.cpuAtDispatchedMs.toFixed(0)} ms of it by the end of dispatch; ` +
        `the process's third burst: its first, cold, took ${burst.coldCompletedMs.toFixed(0)} ms (dispatch ${burst.coldDispatchedMs.toFixed(0)} ms, CPU ${burst.coldCpuTotalMs.toFixed(0)} ms)`,
      details: burst,
    });

    // Distributed: dispatch in one process, a `svc worker` process delivers (LISTEN/NOTIFY wake-up).
    if (postgres) {
      const distDir = path.join(dir, 'distributed');
      fs.mkdirSync(distDir);
      const env = webhookEnv(distDir, await postgres.createDatabase('distributed'));
      run(NODE, [path.join(ROOT, 'dist/main.js'), 'migrate'], { env });
      const worker = await startProcess({
        name: 'svc-worker',
        command: NODE,
        args: [path.join(ROOT, 'dist/main.js'), 'worker'],
        env,
        cpu: SERVER_CPU,
        logFile: path.join(distDir, 'worker.log'),
        ready: (log) => log.includes('svc worker running'),
      });
      started.push(worker);
      for (const line of await child(plan, env, { ...latencyBase, mode: 'dispatch', rates: [100] })) {
        metrics.push(latencyMetric(`distributed_${line.rate}`, labels.distributed(line.rate), line, 'distributed'));
      }
    } else {
      metrics.push(notAvailable('distributed_100', labels.distributed(100), 'PostgreSQL not installed'));
    }
    return metrics;
  } finally {
    for (const s of started.reverse()) await s.stop();
  }
}
