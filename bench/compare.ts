// `npm run bench:compare -- <name>=<build dir>[,KEY=VALUE…] …`: CPU per `GET /api/v1/me/` request of
// several builds (or settings) of the service, measured side by side, for A/B work on the hot path.
//
// Measured one after the other, two servers on a shared machine differ from minute to minute by
// more than most single changes are worth. Here every server runs at the same time on CPU 0,
// each under its own paced wrk load from CPU 1 (the same pace and connection count for each), so all
// of them meet the same machine at the same moment; the figure is each round's CPU per request of a
// server divided by the first server's in that round, and the median over rounds
// (docs/performance.md, "Comparing builds side by side").
//
// A build dir is a copy of dist/ inside the project (so that node_modules resolves), e.g.
//   npm run build && cp -r dist .dist-before   … change, build …   cp -r dist .dist-after
//   npm run bench:compare -- before=.dist-before after=.dist-after quiet=.dist-after,LOG_LEVEL=silent
// Options: --rounds 8 --seconds 3 --delay 5 (mean ms between a connection's requests) --connections 20,
// --seed-from <checkout>: seed with that checkout's bench/seed.ts, for a build older than this tree
// (a build refuses a database migrated past its own migrations; newer ones migrate it forward), e.g.
//   git worktree add ../before <commit> && ln -s $PWD/node_modules ../before/ && (cd ../before && npm run build)
//   cp -r ../before/dist .dist-before && npm run bench:compare -- --seed-from ../before before=.dist-before now=dist
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { seedTokens, startAppServer } from './lib/app-server.ts';
import { ROOT, tempDir, type Started } from './lib/processes.ts';
import { median } from './lib/stats.ts';
import { CLIENT_CPU, SERVER_CPU, wrk } from './lib/wrk.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    rounds: { type: 'string', default: '8' },
    seconds: { type: 'string', default: '3' },
    delay: { type: 'string', default: '5' },
    connections: { type: 'string', default: '20' },
    'seed-from': { type: 'string' },
  },
});
if (positionals.length < 2)
  throw new Error('usage: bench/compare.ts [options] <name>=<build dir>[,KEY=VALUE…] <name>=<build dir>…');
const builds = positionals.map((spec) => {
  const [name, rest] = spec.split(/=(.*)/s, 2);
  const [dir, ...settings] = rest.split(',');
  const main = path.resolve(ROOT, dir, 'main.js');
  if (!fs.existsSync(main)) throw new Error(`${name}: ${main} does not exist`);
  return { name, main, env: Object.fromEntries(settings.map((kv) => kv.split(/=(.*)/s, 2))) as Record<string, string> };
});

const dir = tempDir('svc-compare-');
const started: Started[] = [];
try {
  const seedDir = path.join(dir, 'seed');
  fs.mkdirSync(seedDir);
  const tokensFile = path.join(dir, 'tokens.txt');
  const checkout = values['seed-from'] ? path.resolve(values['seed-from']) : ROOT;
  seedTokens(seedDir, `sqlite:${path.join(seedDir, 'bench.sqlite3')}`, tokensFile, checkout);
  const servers: ((typeof builds)[number] & { pid: number; url: string })[] = [];
  for (const build of builds) {
    const dataDir = path.join(dir, build.name);
    fs.cpSync(seedDir, dataDir, { recursive: true });
    const server = await startAppServer({
      name: build.name,
      dataDir,
      databaseUrl: `sqlite:${path.join(dataDir, 'bench.sqlite3')}`,
      cpu: SERVER_CPU,
      env: build.env,
      main: build.main,
    });
    started.push(server);
    servers.push({ ...build, pid: server.pid, url: `${server.url}/api/v1/me/` });
  }
  const measureAll = (seconds: number) =>
    Promise.all(
      servers.map((s) =>
        wrk({
          url: s.url,
          seconds,
          serverPids: [s.pid],
          tokensFile,
          delayMs: Number(values.delay),
          connections: Number(values.connections),
        }),
      ),
    );
  process.stderr.write(
    `warm-up; then ${values.rounds} rounds of ${values.seconds} s, servers on CPU ${SERVER_CPU}, wrk on CPU ${CLIENT_CPU}\n`,
  );
  await measureAll(3);
  const cpu: number[][] = servers.map(() => []);
  const rps: number[][] = servers.map(() => []);
  for (let round = 0; round < Number(values.rounds); round++) {
    const results = await measureAll(Number(values.seconds));
    results.forEach((r, i) => {
      cpu[i].push(r.cpuUsPerRequest);
      rps[i].push(r.rps);
    });
    process.stderr.write(
      `round ${round + 1}: ${results.map((r, i) => `${servers[i].name} ${r.cpuUsPerRequest.toFixed(1)} µs`).join(', ')}\n`,
    );
  }
  const lines = ['| build | req/s each | CPU µs per request | ÷ first, median (range) |', '|---|---|---|---|'];
  servers.forEach((s, i) => {
    const ratios = cpu[i].map((c, round) => c / cpu[0][round]);
    lines.push(
      `| ${s.name} | ${median(rps[i])!.toFixed(0)} | ${median(cpu[i])!.toFixed(1)} | ` +
        `${median(ratios)!.toFixed(3)} (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}) |`,
    );
  });
  process.stdout.write(`${lines.join('\n')}\n`);
} finally {
  for (const s of started.reverse()) await s.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}
