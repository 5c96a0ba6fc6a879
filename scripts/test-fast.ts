// `npm run test:fast`: the edit loop's suite. Every test file except those that spawn processes
// (the CLI, `svc worker`, the build, packing), drive Chromium, run the conformance suite or hold
// the database for a long time; SQLite only (no TEST_DATABASE_URL). `npm test` stays the whole suite.
import { spawnSync } from 'node:child_process';
import { globSync } from 'node:fs';

const SLOW = [
  /browser/,
  /^test\/(backup|build|deploy)\//,
  /^clients\/[^/]+\/test\/(cli|pack)\.test\.ts$/,
  /^test\/cli\/(process|start|help)\.test\.ts$/,
  /^test\/db\/(sqlite-processes|sqlite-busy|sqlite-checkpointer)\.test\.ts$/,
  /^test\/mcp\/(conformance|oauth-flow)\.test\.ts$/,
  /^test\/metrics\/worker-metrics\.test\.ts$/,
  /^test\/oauth\/(cli|device-flow)\.test\.ts$/,
  /^test\/teams\/cli-events\.test\.ts$/,
  /^test\/tokens\/cli-jwt\.test\.ts$/,
  /^test\/webhooks\/(crash|pipeline|postgres-scale|processes)\.test\.ts$/,
];

const files = [...globSync('test/**/*.test.ts'), ...globSync('clients/*/test/**/*.test.ts')]
  .filter((file) => !SLOW.some((pattern) => pattern.test(file)))
  .sort();
const env = { ...process.env };
delete env.TEST_DATABASE_URL;
delete env.TEST_REDIS_URL;
const run = spawnSync(
  process.execPath,
  [
    '--disable-warning=ExperimentalWarning',
    '--conditions=svc-source',
    '--test',
    '--test-concurrency=4',
    '--test-timeout=60000',
    ...process.argv.slice(2),
    ...files,
  ],
  { stdio: 'inherit', env },
);
process.exit(run.status ?? 1);
