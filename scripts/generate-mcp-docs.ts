// `npm run generate:mcp-docs`: rewrites the generated part of docs/mcp.md (the tool list and what
// each scope unlocks) from the tool catalog of this checkout: an app built in-process on an
// in-memory SQLite database with webhooks on (so that their tools are listed), default settings
// otherwise. `--check` writes nothing and exits 1 when the file differs (test/mcp/docs.test.ts
// checks the same).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { createContext } from '../src/context.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { DOCS_BEGIN, DOCS_END, docsBlock } from '../src/mcp/api-docs.ts';
import { buildCatalog, type OpenApiDocument } from '../src/mcp/catalog.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const TARGET = path.join(ROOT, 'docs/mcp.md');
const { values } = parseArgs({ options: { check: { type: 'boolean', default: false } } });

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-mcp-docs-'));
try {
  const env = {
    NODE_ENV: 'test',
    DATABASE_URL: 'sqlite::memory:',
    SERVICE_DATA_DIR: dataDir,
    SERVICE_WEBHOOKS_ENABLED: 'true',
    LOG_LEVEL: 'silent',
  };
  const ctx = createContext(loadConfig(env));
  await migrateToLatest(ctx.db);
  const app = await buildApp(ctx);
  await app.ready();
  const catalog = buildCatalog((await app.openApiDocument!()) as OpenApiDocument, { webhooksEnabled: true });
  const block = docsBlock(catalog, ctx.scopes.names());
  await app.close();
  await ctx.db.close();
  const current = fs.readFileSync(TARGET, 'utf8');
  const start = current.indexOf(DOCS_BEGIN);
  const end = current.indexOf(DOCS_END);
  if (start < 0 || end < start) throw new Error(`docs/mcp.md lacks the markers ${DOCS_BEGIN} … ${DOCS_END}`);
  const next = current.slice(0, start) + block + current.slice(end + DOCS_END.length);
  if (values.check) {
    if (next !== current) {
      process.stderr.write('docs/mcp.md is out of date: run npm run generate:mcp-docs\n');
      process.exitCode = 1;
    }
  } else if (next !== current) {
    fs.writeFileSync(TARGET, next);
    process.stdout.write('docs/mcp.md updated\n');
  }
} finally {
  fs.rmSync(dataDir, { recursive: true, force: true });
}
