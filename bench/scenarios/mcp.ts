// MCP tool calls against the REST call they run, on one server (the production build, SQLite, the
// 1,024 seeded PATs rotated as on the HTTP scenario): `tools/call get_me` as POST /mcp, in the
// current revision (2026-07-28: the request's `_meta` envelope and MCP-Protocol-Version, Mcp-Method,
// Mcp-Name headers, as the SDK client sends it when it negotiates) and in the 2025 stateless form
// (the SDK client's default), each ÷ GET /api/v1/me/ measured in the same round, in rotating order.
// Beside them, on the same CPU, the SDK's floor (bench/servers/mcp-sdk-floor.mjs): the SDK's HTTP
// handler with a constant tool and nothing of the service, in the current revision, ÷ the same REST
// figure: how far any endpoint built on that handler can go on this machine.
import fs from 'node:fs';
import path from 'node:path';
import { request } from 'undici';
import { SEED_TOKENS_PER_USER, SEED_USERS, seedTokens, startAppServer, type AppServer } from '../lib/app-server.ts';
import { NODE, ROOT, freePort, startProcess, type Started } from '../lib/processes.ts';
import type { Metric } from '../lib/report.ts';
import { overRounds } from '../lib/ratios.ts';
import { median } from '../lib/stats.ts';
import { SERVER_CPU, wrk, type WrkResult } from '../lib/wrk.ts';
import type { Plan } from '../run.ts';

const ACCEPT = 'application/json, text/event-stream';
const MODERN_BODY = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: {
    name: 'get_me',
    arguments: {},
    _meta: {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1.0.0' },
      'io.modelcontextprotocol/clientCapabilities': {},
    },
  },
});
const LEGACY_BODY = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'get_me', arguments: {} },
});
const KINDS = {
  rest: { path: '/api/v1/me/' },
  modern: {
    path: '/mcp',
    body: MODERN_BODY,
    headers: { Accept: ACCEPT, 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tools/call', 'Mcp-Name': 'get_me' },
  },
  legacy: { path: '/mcp', body: LEGACY_BODY, headers: { Accept: ACCEPT, 'MCP-Protocol-Version': '2025-11-25' } },
  floor: {
    path: '/mcp',
    body: MODERN_BODY,
    headers: { Accept: ACCEPT, 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tools/call', 'Mcp-Name': 'get_me' },
  },
} as const;
type Kind = keyof typeof KINDS;

/** One call of each kind through a real socket: each must succeed (wrk counts only ≥ 400 as errors). */
async function preflight(urls: Record<Kind, string>, token: string) {
  for (const [kind, spec] of Object.entries(KINDS) as [Kind, (typeof KINDS)[Kind]][]) {
    const url = urls[kind];
    const body = 'body' in spec ? spec.body : undefined;
    const response = await request(`${url}${spec.path}`, {
      method: body ? 'POST' : 'GET',
      headers: {
        authorization: `Bearer ${token}`,
        ...('headers' in spec ? spec.headers : {}),
        ...(body ? { 'content-type': 'application/json' } : {}),
      },
      body,
    });
    const text = await response.body.text();
    const ok =
      response.statusCode === 200 &&
      (kind === 'rest' ||
        (JSON.parse(text).result?.structuredContent?.id !== undefined && !JSON.parse(text).result.isError));
    if (!ok) throw new Error(`preflight ${kind} → ${response.statusCode}: ${text.slice(0, 500)}`);
  }
}

export async function mcpScenarios(plan: Plan): Promise<Metric[]> {
  const dir = path.join(plan.dir, 'mcp');
  fs.mkdirSync(dir);
  const tokensFile = path.join(dir, 'tokens.txt');
  plan.log(`seeding ${SEED_USERS * SEED_TOKENS_PER_USER} PATs for ${SEED_USERS} users (SQLite)`);
  const databaseUrl = `sqlite:${path.join(dir, 'bench.sqlite3')}`;
  seedTokens(dir, databaseUrl, tokensFile);
  let server: AppServer | null = null;
  let floor: Started | null = null;
  try {
    server = await startAppServer({ name: 'mcp', dataDir: dir, databaseUrl, cpu: SERVER_CPU });
    const floorPort = await freePort();
    floor = await startProcess({
      name: 'mcp-sdk-floor',
      command: NODE,
      args: [path.join(ROOT, 'bench/servers/mcp-sdk-floor.mjs')],
      env: { PATH: process.env.PATH, PORT: String(floorPort) },
      cpu: SERVER_CPU,
      logFile: path.join(dir, 'mcp-sdk-floor.log'),
      ready: (log) => log.includes('listening'),
    });
    const servers: Record<Kind, { url: string; pid: number }> = {
      rest: server,
      modern: server,
      legacy: server,
      floor: { url: `http://127.0.0.1:${floorPort}`, pid: floor.pid },
    };
    const tokens = fs.readFileSync(tokensFile, 'utf8').trim().split('\n');
    await preflight({ rest: server.url, modern: server.url, legacy: server.url, floor: servers.floor.url }, tokens[0]);
    const bodies: Partial<Record<Kind, string>> = {};
    for (const kind of ['modern', 'legacy', 'floor'] as const) {
      bodies[kind] = path.join(dir, `${kind}.txt`);
      fs.writeFileSync(bodies[kind]!, `${KINDS[kind].body}\n`);
    }
    const measure = (kind: Kind, seconds: number) => {
      const spec = KINDS[kind];
      return wrk({
        url: `${servers[kind].url}${spec.path}`,
        method: kind === 'rest' ? 'GET' : 'POST',
        tokensFile,
        bodiesFile: bodies[kind],
        headers: 'headers' in spec ? spec.headers : undefined,
        seconds,
        serverPids: [servers[kind].pid],
      });
    };
    const kinds: Kind[] = ['rest', 'modern', 'legacy', 'floor'];
    plan.log(`warm-up ${plan.warmupSeconds} s each: ${kinds.join(', ')}`);
    for (const kind of kinds) await measure(kind, plan.warmupSeconds);
    const rounds: Record<Kind, WrkResult>[] = [];
    for (let round = 0; round < plan.maxRounds; round++) {
      const results = {} as Record<Kind, WrkResult>;
      for (const kind of kinds.map((_, i) => kinds[(i + round) % kinds.length]))
        results[kind] = await measure(kind, plan.seconds);
      rounds.push(results);
      plan.log(
        `mcp round ${round + 1}: ${kinds.map((k) => `${k} ${Math.round(results[k].rps)}/s (${Math.round(results[k].cpuUsPerRequest)} µs)`).join(', ')}${kinds.every((k) => results[k].clean) ? '' : ' (contended)'}`,
      );
      const clean = rounds.filter((r) => kinds.every((k) => r[k].clean)).length;
      if (rounds.length >= plan.rounds && (clean >= plan.rounds || plan.quick)) break;
    }
    const clean = rounds.filter((r) => kinds.every((k) => r[k].clean));
    const chosen = clean.length ? clean : rounds;
    const metric = (kind: Exclude<Kind, 'rest'>, id: string, label: string): Metric => {
      const ratios = chosen.map((r) => r[kind].rps / r.rest.rps);
      return {
        id,
        label,
        value: median(chosen.map((r) => r[kind].rps)),
        unit: 'req/s',
        baseline: median(chosen.map((r) => r.rest.rps)),
        baselineLabel: 'GET /api/v1/me/',
        ...overRounds(ratios),
        rounds: clean.length,
        dropped: rounds.length - clean.length,
        details: {
          perRound: chosen.map((r, i) => ({ round: i + 1, ratio: r[kind].rps / r.rest.rps })),
          cpuUsPerRequest: {
            [kind]: median(chosen.map((r) => r[kind].cpuUsPerRequest)),
            rest: median(chosen.map((r) => r.rest.cpuUsPerRequest)),
          },
          p99Ms: { [kind]: median(chosen.map((r) => r[kind].p99Ms)), rest: median(chosen.map((r) => r.rest.p99Ms)) },
        },
      };
    };
    return [
      metric('modern', 'mcp_get_me', 'MCP tools/call get_me (2026-07-28, PAT, SQLite) req/s ÷ REST GET /api/v1/me/'),
      metric('legacy', 'mcp_get_me_2025', 'same, 2025-11-25 stateless request ÷ REST'),
      metric('floor', 'mcp_sdk_floor', "the SDK's HTTP handler alone, constant tool (2026-07-28) ÷ REST: the ceiling"),
    ];
  } finally {
    await server?.stop();
    await floor?.stop();
  }
}
