// What another process's commits cost the PAT cache of a server on the same SQLite file: GET
// /api/v1/me/ (the seeded PATs, SQLite, closed loop) measured alone and beside a process that commits
// a row to a table of its own 100 times a second (bench/servers/sqlite-writer.mjs, as a `svc worker`
// or a `svc` command writes), one after the other in each round, the order rotating. The server learns
// of other processes' commits from PRAGMA data_version and empties its cache only when a credential
// changed (migration 0017, docs/performance.md "The PAT cache and its exact guarantee"): near 1, it
// keeps its cache; emptied on every commit it read about 0.4. No must: issue 32's table does not name it.
import fs from 'node:fs';
import path from 'node:path';
import { preflight, seedTokens, startAppServer } from '../lib/app-server.ts';
import { NODE, ROOT, startProcess, type Started } from '../lib/processes.ts';
import type { Metric } from '../lib/report.ts';
import { CLIENT_CPU, SERVER_CPU, wrk, type WrkResult } from '../lib/wrk.ts';
import type { Plan } from '../run.ts';
import { alternatingRounds } from './alternating-rounds.ts';
import { ratioMetric } from './http.ts';

const WRITER_RATE = 100;

export async function patCacheScenarios(plan: Plan): Promise<Metric[]> {
  const dir = path.join(plan.dir, 'pat-cache');
  fs.mkdirSync(dir);
  const started: Started[] = [];
  try {
    const tokensFile = path.join(dir, 'tokens.txt');
    const file = path.join(dir, 'bench.sqlite3');
    plan.log('seeding PATs (SQLite)');
    seedTokens(dir, `sqlite:${file}`, tokensFile);
    const server = await startAppServer({
      name: 'pat_cache',
      dataDir: dir,
      databaseUrl: `sqlite:${file}`,
      cpu: SERVER_CPU,
    });
    started.push(server);
    await preflight(server.url, fs.readFileSync(tokensFile, 'utf8').split('\n', 1)[0]);

    const measure = async (key: string, seconds: number): Promise<WrkResult> => {
      const writer =
        key === 'beside_writer'
          ? await startProcess({
              name: 'sqlite_writer',
              command: NODE,
              args: [path.join(ROOT, 'bench/servers/sqlite-writer.mjs')],
              env: { PATH: process.env.PATH, SQLITE_WRITER_FILE: file, SQLITE_WRITER_RATE: String(WRITER_RATE) },
              cpu: CLIENT_CPU,
              logFile: path.join(dir, 'sqlite-writer.log'),
              ready: (log) => log.includes('writing'),
            })
          : null;
      try {
        return await wrk({ url: `${server.url}/api/v1/me/`, seconds, serverPids: [server.pid], tokensFile });
      } finally {
        await writer?.stop();
      }
    };

    const samples = await alternatingRounds(plan, ['alone', 'beside_writer'], measure);
    return [
      ratioMetric(
        samples,
        'pat_cache_writer',
        `/me/ (PAT, SQLite) req/s beside another process committing ${WRITER_RATE} rows/s to the file ÷ alone`,
        'beside_writer',
        'alone',
        'alone',
        (r) => r.rps,
        'req/s',
      ),
    ];
  } finally {
    for (const s of started.reverse()) await s.stop();
  }
}
