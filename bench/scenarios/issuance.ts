// Whether token issuance stalls other requests: the p99 of GET /api/v1/me/ paced at ~10k req/s while a
// side loop issues 5 JWTs per second through POST /api/auth/token/ (each verifies an argon2id password
// hash: 19 MiB, 2 passes, tens of ms of CPU), ÷ the same paced p99 with no issuance, both measured in
// each round on one production server (SQLite, default logging), in alternating order. Five clean
// rounds; the table judges the worst (bench/lib/ratios.ts). The hash runs on the service's own worker
// threads at nice 10 (src/accounts/argon2-threads.ts), named `argon2`: around every issuing
// measurement the scenario reads the server's threads from /proc and reports the CPU they spent
// against the main thread's, which shows where the hashing ran.
import fs from 'node:fs';
import path from 'node:path';
import { request } from 'undici';
import { SEED_USERS, preflight, seedTokens, startAppServer, type AppServer } from '../lib/app-server.ts';
import { threadCpu, TICKS_PER_SECOND, type ThreadCpu } from '../lib/proc.ts';
import { overRounds } from '../lib/ratios.ts';
import { notAvailable, type Metric } from '../lib/report.ts';
import { median } from '../lib/stats.ts';
import { SERVER_CPU, wrk, type WrkResult } from '../lib/wrk.ts';
import type { Plan } from '../run.ts';

/** Mean per-connection pause that paces 50 connections at about 10k requests/s (bench/wrk/requests.lua). */
const PACED_DELAY_MS = 5;
const ISSUANCES_PER_SECOND = 5;
/** The password bench/seed.ts gives every seeded user. */
const BENCH_PASSWORD = 'bench password that is long enough';
const LABEL = `GET /api/v1/me/ p99 (paced ~10k req/s) while ${ISSUANCES_PER_SECOND} token issuances/s run ÷ idle`;
/** The name src/accounts/argon2-threads.ts gives its threads. */
const HASH_THREAD = 'argon2';

/** Whether JWT issuance (POST /api/auth/token/) answers 200 for a seeded user (a missing route gives 404). */
export async function issuanceAvailable(url: string): Promise<boolean> {
  const response = await request(`${url}/api/auth/token/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'bench-user-0000@example.com', password: BENCH_PASSWORD }),
  });
  await response.body.text();
  return response.statusCode === 200;
}

/** Issues tokens at a steady rate until stopped; every issuance must succeed. */
function issueTokens(url: string) {
  let stopped = false;
  let issued = 0;
  let failure: Error | null = null;
  const inflight = new Set<Promise<void>>();
  const timer = setInterval(() => {
    if (stopped) return;
    const n = String(issued % SEED_USERS).padStart(4, '0');
    const p = request(`${url}/api/auth/token/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: `bench-user-${n}@example.com`, password: BENCH_PASSWORD }),
    }).then(
      async (response) => {
        const body = await response.body.text();
        if (response.statusCode !== 200) failure ??= new Error(`token issuance → ${response.statusCode}: ${body}`);
        issued++;
      },
      (error: Error) => {
        failure ??= error;
      },
    );
    inflight.add(p);
    void p.finally(() => inflight.delete(p));
  }, 1000 / ISSUANCES_PER_SECOND);
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await Promise.all(inflight);
      if (failure) throw failure;
      return issued;
    },
  };
}

/** CPU ms each kind of thread spent between two /proc snapshots: the main thread, the hash threads, the rest. */
export function threadShares(before: ThreadCpu[], after: ThreadCpu[]) {
  const was = new Map(before.map((t) => [t.tid, t.ticks]));
  const ms = { main: 0, hash: 0, other: 0, hashNice: null as number | null };
  for (const t of after) {
    const spent = ((t.ticks - (was.get(t.tid) ?? 0)) * 1000) / TICKS_PER_SECOND;
    if (t.name === 'MainThread') ms.main += spent;
    else if (t.name === HASH_THREAD) {
      ms.hash += spent;
      ms.hashNice = t.nice;
    } else ms.other += spent;
  }
  return ms;
}

interface Round {
  round: number;
  idle: WrkResult;
  issuing: WrkResult;
  issued: number;
  threadsMs: ReturnType<typeof threadShares>;
}

export async function issuanceScenarios(plan: Plan): Promise<Metric[]> {
  const dir = path.join(plan.dir, 'issuance');
  fs.mkdirSync(dir);
  const tokensFile = path.join(dir, 'tokens.txt');
  plan.log(`seeding PATs for ${SEED_USERS} users (SQLite)`);
  seedTokens(dir, `sqlite:${path.join(dir, 'bench.sqlite3')}`, tokensFile);
  const token = fs.readFileSync(tokensFile, 'utf8').split('\n', 1)[0];
  let server: AppServer | null = null;
  try {
    server = await startAppServer({
      name: 'issuance',
      dataDir: dir,
      databaseUrl: `sqlite:${path.join(dir, 'bench.sqlite3')}`,
      cpu: SERVER_CPU,
    });
    await preflight(server.url, token);
    if (!(await issuanceAvailable(server.url)))
      return [notAvailable('issuance_p99', LABEL, 'POST /api/auth/token/ is not in this build')];
    const url = server.url;
    const pid = server.pid;
    const paced = (seconds: number) =>
      wrk({ url: `${url}/api/v1/me/`, seconds, serverPids: [pid], tokensFile, delayMs: PACED_DELAY_MS });
    const issuing = async (seconds: number) => {
      const before = threadCpu(pid);
      const issuer = issueTokens(url);
      let result: WrkResult;
      try {
        result = await paced(seconds);
      } catch (error) {
        await issuer.stop().catch(() => 0);
        throw error;
      }
      const issued = await issuer.stop();
      return { result, issued, threadsMs: threadShares(before, threadCpu(pid)) };
    };

    plan.log(`warm-up ${plan.warmupSeconds} s idle and ${plan.warmupSeconds} s issuing`);
    await paced(plan.warmupSeconds);
    await issuing(plan.warmupSeconds);

    const rounds: Round[] = [];
    for (let round = 0; round < plan.maxRounds; round++) {
      let idle: WrkResult;
      let busy: Awaited<ReturnType<typeof issuing>>;
      if (round % 2) {
        busy = await issuing(plan.seconds);
        idle = await paced(plan.seconds);
      } else {
        idle = await paced(plan.seconds);
        busy = await issuing(plan.seconds);
      }
      rounds.push({ round: round + 1, idle, issuing: busy.result, issued: busy.issued, threadsMs: busy.threadsMs });
      plan.log(
        `issuance round ${round + 1}: idle p99 ${idle.p99Ms.toFixed(2)} ms, issuing p99 ${busy.result.p99Ms.toFixed(2)} ms ` +
          `(${busy.issued} issued; CPU ms main ${busy.threadsMs.main.toFixed(0)}, argon2 ${busy.threadsMs.hash.toFixed(0)}, ` +
          `other ${busy.threadsMs.other.toFixed(0)})${idle.clean && busy.result.clean ? '' : ' (contended)'}`,
      );
      const clean = rounds.filter((r) => r.idle.clean && r.issuing.clean).length;
      if (rounds.length >= plan.rounds && (clean >= plan.rounds || plan.quick)) break;
    }

    const clean = rounds.filter((r) => r.idle.clean && r.issuing.clean);
    const chosen = clean.length ? clean : rounds;
    const ratios = chosen.map((r) => r.issuing.p99Ms / r.idle.p99Ms);
    const issued = chosen.reduce((n, r) => n + r.issued, 0);
    const hashMs = chosen.reduce((n, r) => n + r.threadsMs.hash, 0);
    const nice = chosen.find((r) => r.threadsMs.hashNice !== null)?.threadsMs.hashNice;
    return [
      {
        id: 'issuance_p99',
        label: LABEL,
        value: median(chosen.map((r) => r.issuing.p99Ms)),
        unit: 'ms',
        baseline: median(chosen.map((r) => r.idle.p99Ms)),
        baselineLabel: 'idle',
        ...overRounds(ratios),
        rounds: clean.length,
        dropped: rounds.length - clean.length,
        note:
          `${issued} issuances; the argon2 threads (nice ${nice ?? '?'}) spent ${(hashMs / Math.max(1, issued)).toFixed(1)} ms of CPU per issuance, ` +
          `the main thread ${median(chosen.map((r) => r.threadsMs.main))!.toFixed(0)} ms per issuing measurement`,
        details: {
          perRound: rounds.map((r) => ({
            round: r.round,
            ratio: r.issuing.p99Ms / r.idle.p99Ms,
            idleP99Ms: r.idle.p99Ms,
            issuingP99Ms: r.issuing.p99Ms,
            issued: r.issued,
            threadsMs: r.threadsMs,
            clean: r.idle.clean && r.issuing.clean,
          })),
        },
      },
    ];
  } finally {
    await server?.stop();
  }
}
