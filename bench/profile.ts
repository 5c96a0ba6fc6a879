// `npm run bench:profile [-- --seconds 10 --out docs/flamegraph-me.svg --keep <dir>]`: where the time of a
// GET /api/v1/me/ request goes. Starts the production build (SQLite, default logging, the 1,024
// seeded PATs, pinned to CPU 0 as in `npm run bench`) with `node --cpu-prof`, and a bare node:http
// server likewise; drives each with wrk from CPU 1 (closed loop, 50 connections) for a warm-up and
// then for --seconds, the other server stopped meanwhile; stops both (the profile is written at
// exit), reads the samples of the measured window only, maps the bundle's frames back to their
// sources with its source maps, prints the self time of each origin (Node's HTTP stack, src/,
// Fastify, pino, SQLite and Kysely, GC, …) as a share and in µs per request beside bare's, and
// writes the service's flame graph as an SVG (bench/lib/flamegraph.ts).
import fs from 'node:fs';
import { SourceMap } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { preflight, seedTokens, startAppServer, startBare, type AppServer } from './lib/app-server.ts';
import { ensureBuild } from './lib/build.ts';
import {
  ORIGINS,
  callTree,
  originOf,
  selfByName,
  selfByOrigin,
  without,
  type CallFrame,
  type CpuProfile,
  type Frame,
} from './lib/cpuprofile.ts';
import { renderFlameGraph } from './lib/flamegraph.ts';
import { pauseTrees } from './lib/proc.ts';
import { NODE, ROOT, stopAll, tempDir } from './lib/processes.ts';
import { CLIENT_CPU, SERVER_CPU, wrk, type WrkResult } from './lib/wrk.ts';
import { issuanceAvailable } from './scenarios/issuance.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '3' },
    out: { type: 'string', default: 'docs/flamegraph-me.svg' },
    // Keeps the raw .cpuprofile files here (Chrome DevTools and speedscope read them).
    keep: { type: 'string' },
    'no-build': { type: 'boolean', default: false },
  },
});

const COLORS: Record<string, string> = {
  [ORIGINS.http]: '#e8a33d',
  [ORIGINS.ours]: '#4f9d69',
  [ORIGINS.fastify]: '#5b8fd1',
  [ORIGINS.pino]: '#b07cc6',
  [ORIGINS.sqlite]: '#d16b5b',
  [ORIGINS.gc]: '#8c8c8c',
  [ORIGINS.node]: '#e6cf6e',
  [ORIGINS.program]: '#b5b5b5',
  [ORIGINS.other]: '#9fc9c4',
};

const log = (line: string) => process.stderr.write(`[profile] ${line}\n`);
const nowUs = () => Number(process.hrtime.bigint() / 1000n);

/** Names a call frame by its original source: the bundle's frames through dist/*.js.map. */
function describer() {
  const maps = new Map<string, SourceMap | null>();
  const mapOf = (file: string) => {
    if (!maps.has(file)) {
      try {
        maps.set(file, new SourceMap(JSON.parse(fs.readFileSync(`${file}.map`, 'utf8'))));
      } catch {
        maps.set(file, null);
      }
    }
    return maps.get(file)!;
  };
  return (frame: CallFrame) => {
    const fn = frame.functionName || '(anonymous)';
    let source = frame.url;
    let line = frame.lineNumber;
    if (source.startsWith('file://')) {
      const file = fileURLToPath(source);
      source = path.relative(ROOT, file);
      // findEntry gives {} where the map has no entry for the position.
      const entry = (line >= 0 ? mapOf(file)?.findEntry(line, frame.columnNumber) : undefined) as
        { originalSource?: string; originalLine?: number } | undefined;
      if (entry?.originalSource !== undefined && entry.originalLine !== undefined) {
        const original = entry.originalSource.startsWith('file://')
          ? fileURLToPath(entry.originalSource)
          : path.resolve(path.dirname(file), entry.originalSource);
        source = path.relative(ROOT, original);
        line = entry.originalLine;
      }
    }
    const where = source ? ` ${source.replace(/^node_modules\//, '')}:${line + 1}` : '';
    return { name: `${fn}${where}`, origin: originOf(frame.functionName, source) };
  };
}

interface Profiled {
  result: WrkResult;
  window: { from: number; to: number };
}

async function main() {
  const seconds = Number(values.seconds);
  ensureBuild(log, values['no-build']);
  spawnSync('taskset', ['-a', '-p', '-c', String(CLIENT_CPU), String(process.pid)], { stdio: 'ignore' });
  const dir = tempDir('svc-profile-');
  const tokensFile = path.join(dir, 'tokens.txt');
  log('seeding PATs (SQLite)');
  seedTokens(dir, `sqlite:${path.join(dir, 'bench.sqlite3')}`, tokensFile);
  const token = fs.readFileSync(tokensFile, 'utf8').split('\n', 1)[0];
  const prof = (name: string) => ['--cpu-prof', '--cpu-prof-dir', dir, '--cpu-prof-name', `${name}.cpuprofile`];
  const appServer = await startAppServer({
    name: 'app',
    dataDir: dir,
    databaseUrl: `sqlite:${path.join(dir, 'bench.sqlite3')}`,
    cpu: SERVER_CPU,
    nodeArgs: prof('app'),
  });
  const size = await preflight(appServer.url, token);
  const servers: Record<'app' | 'bare', AppServer> = {
    app: appServer,
    // The same body size as /me/'s, as in `npm run bench`.
    bare: await startBare({
      name: 'bare',
      dir,
      cpu: SERVER_CPU,
      env: { BARE_BODY_BYTES: String(size) },
      nodeArgs: prof('bare'),
    }),
  };
  // As in `npm run bench`: the server has answered one request of another kind before its warm-up.
  await issuanceAvailable(servers.app.url);
  const measure = async (key: 'app' | 'bare', s: number): Promise<Profiled> => {
    const resume = pauseTrees([servers[key === 'app' ? 'bare' : 'app'].pid]);
    try {
      const from = nowUs();
      const result = await wrk({
        url: `${servers[key].url}/api/v1/me/`,
        seconds: s,
        serverPids: [servers[key].pid],
        tokensFile,
      });
      return { result, window: { from, to: nowUs() } };
    } finally {
      resume();
    }
  };
  log(`warm-up ${values.warmup} s each, then ${seconds} s each under the profiler`);
  for (const key of ['app', 'bare'] as const) await measure(key, Number(values.warmup));
  const app = await measure('app', seconds);
  const bare = await measure('bare', seconds);
  await servers.app.stop();
  await servers.bare.stop();

  const describe = describer();
  const tree = (name: string, m: Profiled): Frame => {
    const profile = JSON.parse(fs.readFileSync(path.join(dir, `${name}.cpuprofile`), 'utf8')) as CpuProfile;
    return without(callTree(profile, describe, m.window), '(idle)');
  };
  const appTree = tree('app', app);
  const bareTree = tree('bare', bare);
  const perRequest = (root: Frame, m: Profiled) => (origin: string) =>
    (selfByOrigin(root).find(([o]) => o === origin)?.[1] ?? 0) / m.result.requests;
  const appUs = perRequest(appTree, app);
  const bareUs = perRequest(bareTree, bare);
  const shares = selfByOrigin(appTree).map(([origin, us]) => [origin, us / appTree.total] as [string, number]);

  const lines = [
    `/api/v1/me/ ${Math.round(app.result.rps)} req/s, bare ${Math.round(bare.result.rps)} req/s (ratio ${(app.result.rps / bare.result.rps).toFixed(2)}); ` +
      `main thread busy ${(appTree.total / app.result.requests).toFixed(1)} µs per request, bare ${(bareTree.total / bare.result.requests).toFixed(1)} µs; ` +
      `process CPU ${app.result.cpuUsPerRequest.toFixed(1)} / ${bare.result.cpuUsPerRequest.toFixed(1)} µs per request`,
    '',
    '| origin | share of /me/ | µs per /me/ request | µs per bare request |',
    '|---|---|---|---|',
    ...shares.map(
      ([origin, share]) =>
        `| ${origin} | ${(share * 100).toFixed(1)}% | ${appUs(origin).toFixed(1)} | ${bareUs(origin).toFixed(1)} |`,
    ),
    ...shares.flatMap(([origin]) => {
      const bareByName = new Map(selfByName(bareTree, origin));
      return [
        '',
        `${origin}: its largest functions, µs of self time per request (/me/, bare)`,
        ...selfByName(appTree, origin)
          .slice(0, origin === ORIGINS.ours ? 12 : 6)
          .map(
            ([name, us]) =>
              `- ${(us / app.result.requests).toFixed(2)} / ${((bareByName.get(name) ?? 0) / bare.result.requests).toFixed(2)} ${name}`,
          ),
      ];
    }),
  ];
  const svg = renderFlameGraph(appTree, {
    title: 'GET /api/v1/me/ (PAT, SQLite, default logging): CPU profile of the production build under wrk',
    subtitle: `${seconds} s closed loop, 50 connections, server pinned to one core; ${os.cpus().length} × ${os.cpus()[0]?.model}, Node ${spawnSync(NODE, ['-v'], { encoding: 'utf8' }).stdout.trim()}; idle time left out`,
    colors: COLORS,
    legend: shares,
  });
  const out = path.resolve(ROOT, values.out!);
  fs.writeFileSync(out, svg);
  if (values.keep) {
    fs.mkdirSync(values.keep, { recursive: true });
    for (const name of ['app', 'bare'])
      fs.copyFileSync(path.join(dir, `${name}.cpuprofile`), path.join(values.keep, `${name}.cpuprofile`));
  }
  fs.rmSync(dir, { recursive: true, force: true });
  process.stdout.write(`${lines.join('\n')}\n\nflame graph written to ${path.relative(ROOT, out)}\n`);
}

try {
  await main();
} catch (error) {
  log(`FAILED: ${(error as Error).stack ?? error}`);
  await stopAll();
  process.exitCode = 1;
}
