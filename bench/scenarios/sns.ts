// SNS notifications/s through the mail-provider intake (certificate cached) ÷ a bare POST sink
// receiving the same bodies, with wrk, in rotating order each round.
import fs from 'node:fs';
import path from 'node:path';
import { serviceEnv, startBare } from '../lib/app-server.ts';
import { NODE, ROOT, freePort, startProcess, type Started } from '../lib/processes.ts';
import { notAvailable, type Metric } from '../lib/report.ts';
import { overRounds } from '../lib/ratios.ts';
import { median } from '../lib/stats.ts';
import { SERVER_CPU, wrk, type WrkResult } from '../lib/wrk.ts';
import type { Plan } from '../run.ts';

const LABEL = 'SNS notifications/s (cached certificate) ÷ bare POST sink';
const HEADERS = { 'Content-Type': 'text/plain; charset=UTF-8', 'x-amz-sns-message-type': 'Notification' };

export async function snsScenarios(plan: Plan): Promise<Metric[]> {
  for (const file of ['src/mail/intake.ts', 'test/mail/sns-stand-in.ts']) {
    if (!fs.existsSync(path.join(ROOT, file))) return [notAvailable('sns', LABEL, `not available: ${file} is missing`)];
  }
  const dir = path.join(plan.dir, 'sns');
  fs.mkdirSync(dir);
  const bodies = path.join(dir, 'bodies.txt');
  const started: Started[] = [];
  try {
    const port = await freePort();
    const intake = await startProcess({
      name: 'sns-intake',
      command: NODE,
      args: [
        '--disable-warning=ExperimentalWarning',
        path.join(ROOT, 'bench/inproc/sns-server.ts'),
        bodies,
        String(plan.quick ? 1000 : 5000),
      ],
      env: { ...serviceEnv(dir, `sqlite:${path.join(dir, 'bench.sqlite3')}`), PORT: String(port) },
      cpu: SERVER_CPU,
      logFile: path.join(dir, 'intake.log'),
      stdoutToNull: true,
      ready: (log) => /^listening \d+/m.test(log),
      timeoutMs: 120_000,
    });
    started.push(intake);
    const answer = /^answer (.*)$/m.exec(fs.readFileSync(path.join(dir, 'intake.log'), 'utf8'))?.[1] ?? '';
    const sink = await startBare({ name: 'post-sink', dir, cpu: SERVER_CPU, env: { BARE_POST_RESPONSE: answer } });
    started.push(sink);
    const servers = {
      intake: { url: `http://127.0.0.1:${port}`, pid: intake.pid },
      sink: { url: sink.url, pid: sink.pid },
    };
    const measure = (key: 'intake' | 'sink', seconds: number) =>
      wrk({
        url: `${servers[key].url}/webhooks/mailprovider/`,
        method: 'POST',
        bodiesFile: bodies,
        headers: HEADERS,
        seconds,
        serverPids: [servers[key].pid],
      });
    for (const key of ['intake', 'sink'] as const) await measure(key, plan.warmupSeconds);
    const rounds: { intake: WrkResult; sink: WrkResult }[] = [];
    for (let round = 0; round < plan.maxRounds; round++) {
      const order = round % 2 ? (['sink', 'intake'] as const) : (['intake', 'sink'] as const);
      const results = {} as { intake: WrkResult; sink: WrkResult };
      for (const key of order) results[key] = await measure(key, plan.seconds);
      rounds.push(results);
      plan.log(
        `sns round ${round + 1}: intake ${Math.round(results.intake.rps)}/s, sink ${Math.round(results.sink.rps)}/s${results.intake.clean && results.sink.clean ? '' : ' (contended)'}`,
      );
      const clean = rounds.filter((r) => r.intake.clean && r.sink.clean).length;
      if (rounds.length >= plan.rounds && (clean >= plan.rounds || plan.quick)) break;
    }
    const clean = rounds.filter((r) => r.intake.clean && r.sink.clean);
    const chosen = clean.length ? clean : rounds;
    const ratios = chosen.map((r) => r.intake.rps / r.sink.rps);
    return [
      {
        id: 'sns',
        label: LABEL,
        value: median(chosen.map((r) => r.intake.rps)),
        unit: 'req/s',
        baseline: median(chosen.map((r) => r.sink.rps)),
        baselineLabel: 'POST sink',
        ...overRounds(ratios),
        rounds: clean.length,
        dropped: rounds.length - clean.length,
        details: {
          intakeCpuUsPerRequest: median(chosen.map((r) => r.intake.cpuUsPerRequest)),
          sinkCpuUsPerRequest: median(chosen.map((r) => r.sink.cpuUsPerRequest)),
          intakeP99Ms: median(chosen.map((r) => r.intake.p99Ms)),
        },
      },
    ];
  } finally {
    for (const s of started.reverse()) await s.stop();
  }
}
