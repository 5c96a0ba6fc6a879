// `npm run test:fast`: the edit loop's suite. Every test file except those that spawn processes
// (the CLI, `svc worker`, the build, packing), drive Chromium, run the conformance suite, push large
// bodies through real sockets or hold the database for a long time; SQLite only (no
// TEST_DATABASE_URL). `npm test` stays the whole suite.
//
// Why groups in shared processes: a test process spends ~0.5 CPU-s importing the app before its first
// test, and most of these files take less than that. The files run in a few child processes
// (`--test-isolation=none`, balanced by the earlier runs' times), which share that import; the test files
// restore any process-wide state they change. `--isolation=process` runs one process per file instead
// (the `npm test` way), to tell a leak between files from a real failure.
import { spawn } from 'node:child_process';
import { globSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';

const SLOW = [
  /browser/,
  /^test\/(backup|build|deploy)\//,
  /^test\/config-processes\.test\.ts$/,
  /^clients\/[^/]+\/test\/(cli|pack|types)\.test\.ts$/,
  /^test\/cli\/(process|start|help)\.test\.ts$/,
  /^test\/db\/(migrate-processes|sqlite-processes|sqlite-busy|sqlite-checkpointer)\.test\.ts$/,
  /^test\/http\/(refused-body|throttle-redis)\.test\.ts$/,
  /^test\/mcp\/(conformance|oauth-flow)\.test\.ts$/,
  /^test\/metrics\/worker-metrics\.test\.ts$/,
  /^test\/oauth\/(authorization-code|cli|device-flow)\.test\.ts$/,
  /^test\/teams\/cli-events\.test\.ts$/,
  /^test\/tokens\/(cli-jwt|pat-cache-processes)\.test\.ts$/,
  /^test\/webhooks\/(crash|pipeline|postgres-scale|processes|secrets-in-logs)\.test\.ts$/,
];
const TIMINGS = 'test-output/test-fast-timings.json';

const { values: options, tokens } = parseArgs({
  options: { groups: { type: 'string' }, isolation: { type: 'string', default: 'none' } },
  strict: false,
  tokens: true,
});
if (options.isolation !== 'none' && options.isolation !== 'process') {
  console.error('--isolation is "none" (files share a group process) or "process" (a process per file)');
  process.exit(2);
}
// Everything else (--test-name-pattern=…, --test-only, …) goes to `node --test` as given.
// (parseArgs without `strict` reads an unknown option's separate value as a positional: kept in order.)
const passOn = tokens.flatMap((token) => {
  if (token.kind === 'positional') return [token.value];
  if (token.kind !== 'option' || token.name === 'groups' || token.name === 'isolation') return [];
  return [process.argv[token.index + 2]!];
});

const files = [...globSync('test/**/*.test.ts'), ...globSync('clients/*/test/**/*.test.ts')]
  .filter((file) => !SLOW.some((pattern) => pattern.test(file)))
  .sort();
const env: NodeJS.ProcessEnv = { ...process.env, NODE_COMPILE_CACHE: 'node_modules/.cache/test-compile-cache' };
delete env.TEST_DATABASE_URL;
delete env.TEST_REDIS_URL;
const nodeArgs = ['--disable-warning=ExperimentalWarning', '--conditions=svc-source', '--test', '--test-timeout=60000'];

/** The earlier runs' seconds per file (none before the first run). */
function readTimings(): Record<string, number> {
  try {
    return JSON.parse(readFileSync(TIMINGS, 'utf8')) as Record<string, number>;
  } catch {
    return {};
  }
}

/** The earlier runs' seconds per file; a file not timed yet weighs by its size. */
function weights(): Map<string, number> {
  const timed = readTimings();
  return new Map(files.map((file) => [file, timed[file] ?? statSync(file).size / 5_000]));
}

/** Longest first, each to the lightest group: within a few percent of the best split for these sizes. */
function groupsOf(count: number): string[][] {
  const weight = weights();
  const groups = Array.from({ length: count }, () => ({ files: [] as string[], total: 0 }));
  for (const file of [...files].sort((a, b) => weight.get(b)! - weight.get(a)!)) {
    const lightest = groups.reduce((a, b) => (b.total < a.total ? b : a));
    lightest.files.push(file);
    lightest.total += weight.get(file)!;
  }
  return groups.filter((group) => group.files.length > 0).map((group) => group.files);
}

interface GroupResult {
  code: number;
  output: string;
  report: { files: Record<string, number>; tests: number; pass: number; fail: number; skipped: number } | null;
}

function runGroup(index: number, groupFiles: string[], isolation: string): Promise<GroupResult> {
  const reportFile = `test-output/test-fast-group-${index}.json`;
  const args = [
    ...nodeArgs,
    `--test-isolation=${isolation}`,
    ...(isolation === 'process' ? ['--test-concurrency=4'] : []),
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    '--test-reporter=./scripts/test-fast-timings.ts',
    `--test-reporter-destination=${reportFile}`,
    ...passOn,
    ...groupFiles,
  ];
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.on('close', (code) => {
      let report: GroupResult['report'] = null;
      try {
        report = JSON.parse(readFileSync(reportFile, 'utf8')) as GroupResult['report'];
      } catch {
        // The group died before its reporter finished: its output says why.
      }
      resolve({ code: code ?? 1, output: Buffer.concat(chunks).toString('utf8'), report });
    });
  });
}

mkdirSync('test-output', { recursive: true });
const started = performance.now();
const count =
  options.isolation === 'process'
    ? 1
    : Math.max(1, Number(options.groups ?? Math.min(4, 2 * availableParallelism())) || 1);
const groups = options.isolation === 'process' ? [files] : groupsOf(count);
const results = await Promise.all(
  groups.map(async (groupFiles, index) => {
    const result = await runGroup(index, groupFiles, options.isolation as string);
    // Printed whole as each group ends, so groups' lines never interleave.
    process.stdout.write(
      `\n── group ${index + 1} of ${groups.length}: ${groupFiles.length} files ──\n${result.output}`,
    );
    return result;
  }),
);

const seconds = ((performance.now() - started) / 1000).toFixed(1);
const sum = (key: 'tests' | 'pass' | 'fail' | 'skipped') => results.reduce((n, r) => n + (r.report?.[key] ?? 0), 0);
const failed = results.filter((result) => result.code !== 0).length;
console.log(
  `\ntest:fast: ${files.length} files, ${sum('tests')} tests, ${sum('pass')} passed, ${sum('fail')} failed, ` +
    `${sum('skipped')} skipped, in ${seconds} s over ${groups.length} group(s)` +
    (failed ? `; ${failed} group(s) exited non-zero` : ''),
);
// Only a whole, unfiltered run's times steer the next split. Each is averaged with the file's earlier
// figure: a file's time moves by seconds from run to run (the first file of a group also pays for the
// group's warm-up, and the other groups take CPU from it unevenly), and a split by one run's times alone
// is off by as much.
if (results.every((result) => result.report) && passOn.length === 0) {
  const earlier = readTimings();
  const timed: Record<string, number> = {};
  for (const result of results)
    for (const [path, ms] of Object.entries(result.report!.files)) {
      const file = path.slice(process.cwd().length + 1);
      const seconds = earlier[file] === undefined ? ms / 1000 : (earlier[file] + ms / 1000) / 2;
      timed[file] = Math.round(seconds * 1000) / 1000;
    }
  writeFileSync(TIMINGS, JSON.stringify(timed, null, 2) + '\n');
}
process.exit(failed ? 1 : 0);
