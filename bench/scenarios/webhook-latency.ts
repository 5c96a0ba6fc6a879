// How soon an event reaches its receiver: event → first attempt p99 in embedded mode (SQLite, the
// in-process worker woken by the emit) at a paced 100 and 1,000 events/s, a burst of events drained
// (10,000; 2,000 in --quick, which proves the harness and is not judged), and event → first attempt in
// distributed mode (PostgreSQL, a separate `svc worker` woken by LISTEN/NOTIFY). The receiver, on the
// client CPU, records each arrival on a clock shared with the dispatching process.
import fs from 'node:fs';
import path from 'node:path';
import { startBare } from '../lib/app-server.ts';
import { NODE, ROOT, run, startProcess, type Started } from '../lib/processes.ts';
import { notAvailable, type Metric } from '../lib/report.ts';
import { postgresAvailable, startPostgres } from '../lib/services.ts';
import { CLIENT_CPU, CONTENTION_LIMIT_CORES, SERVER_CPU } from '../lib/wrk.ts';
import type { Plan } from '../run.ts';
import { available, certificate, child, webhookEnv, type Line } from './webhook-child.ts';

const BURST = 10_000;
const QUICK_BURST = 2_000;

const labels = {
  latency: (r: number) => `event → first attempt, embedded (SQLite), ${r.toLocaleString('en-US')} events/s paced, p99`,
  burst: (n: number) =>
    `${n.toLocaleString('en-US')}-event burst, one worker, until every first attempt completed (warm process)`,
  distributed: (r: number) => `event → first attempt, distributed (PostgreSQL, svc worker), ${r} events/s paced, p99`,
};

/** One measurement, clean or not: latency figures are one run each, not rounds. */
function once(line: Line) {
  const clean = line.otherCores <= CONTENTION_LIMIT_CORES;
  return { rounds: clean ? 1 : 0, dropped: clean ? 0 : 1 };
}

function latencyMetric(id: string, label: string, line: Line, mode: string): Metric {
  return {
    id,
    label,
    value: line.p99Ms,
    unit: 'ms',
    baseline: null,
    ratio: null,
    ...once(line),
    note: `${mode}; p50 ${line.p50Ms?.toFixed(2)} ms, max ${line.maxMs?.toFixed(1)} ms over ${line.events} events; dispatch at most ${line.maxBehindMs?.toFixed(0)} ms behind its schedule`,
    details: line,
  };
}

export async function webhookLatencyScenarios(plan: Plan): Promise<Metric[]> {
  const burstSize = plan.quick ? QUICK_BURST : BURST;
  // Only the 10,000-event burst is the table's figure.
  const burstId = burstSize === BURST ? 'burst' : `burst_${burstSize}`;
  const missing = available();
  if (missing) {
    return [
      notAvailable('latency_100', labels.latency(100), missing),
      notAvailable('latency_1000', labels.latency(1000), missing),
      notAvailable(burstId, labels.burst(burstSize), missing),
    ];
  }
  const dir = path.join(plan.dir, 'webhook-latency');
  fs.mkdirSync(dir);
  const started: Started[] = [];
  const metrics: Metric[] = [];
  try {
    const tls = certificate(dir);
    const recorder = await startBare({
      name: 'recorder',
      dir,
      cpu: CLIENT_CPU,
      env: { BARE_TLS_CERT: tls.cert, BARE_TLS_KEY: tls.key, BARE_RECORD_EVENTS: '1' },
    });
    started.push(recorder);
    const base = {
      receiverUrl: recorder.url,
      caFile: tls.cert,
      seconds: plan.quick ? 1 : 5,
      warmupSeconds: plan.quick ? 0.5 : plan.warmupSeconds,
      serverPids: [recorder.pid],
    };
    const sqliteDir = path.join(dir, 'sqlite');
    fs.mkdirSync(sqliteDir);
    const env = webhookEnv(sqliteDir, `sqlite:${path.join(sqliteDir, 'bench.sqlite3')}`, tls.cert);
    for (const line of await child(plan, env, { ...base, mode: 'latency', rates: [100, 1000] })) {
      metrics.push(latencyMetric(`latency_${line.rate}`, labels.latency(line.rate), line, 'embedded'));
    }
    const [burst] = await child(plan, env, { ...base, mode: 'burst', burst: burstSize });
    metrics.push({
      id: burstId,
      label: labels.burst(burstSize),
      value: burst.completedMs,
      unit: 'ms',
      baseline: null,
      ratio: null,
      ...once(burst),
      note:
        `dispatch of all ${burstSize} took ${burst.dispatchedMs.toFixed(0)} ms of it (${burst.deliveredWhileDispatching} delivered meanwhile); ` +
        `CPU of the process ${burst.cpuTotalMs.toFixed(0)} ms, ${burst.cpuAtDispatchedMs.toFixed(0)} ms of it by the end of dispatch; ` +
        `the process's third burst: its first, cold, took ${burst.coldCompletedMs.toFixed(0)} ms (dispatch ${burst.coldDispatchedMs.toFixed(0)} ms, CPU ${burst.coldCpuTotalMs.toFixed(0)} ms)`,
      details: burst,
    });

    // Distributed: dispatch in one process, a `svc worker` process delivers (LISTEN/NOTIFY wake-up).
    if (!postgresAvailable()) {
      metrics.push(notAvailable('distributed_100', labels.distributed(100), 'PostgreSQL not installed'));
      return metrics;
    }
    const postgres = await startPostgres(SERVER_CPU);
    started.push(postgres);
    const distDir = path.join(dir, 'distributed');
    fs.mkdirSync(distDir);
    const distEnv = webhookEnv(distDir, await postgres.createDatabase('distributed'), tls.cert);
    run(NODE, [path.join(ROOT, 'dist/main.js'), 'migrate'], { env: distEnv });
    const worker = await startProcess({
      name: 'svc-worker',
      command: NODE,
      args: [path.join(ROOT, 'dist/main.js'), 'worker'],
      env: distEnv,
      cpu: SERVER_CPU,
      logFile: path.join(distDir, 'worker.log'),
      ready: (log) => log.includes('svc worker running'),
    });
    started.push(worker);
    for (const line of await child(plan, distEnv, { ...base, mode: 'dispatch', rates: [100] })) {
      metrics.push(latencyMetric(`distributed_${line.rate}`, labels.distributed(line.rate), line, 'distributed'));
    }
    return metrics;
  } finally {
    for (const s of started.reverse()) await s.stop();
  }
}
