// Seeds one database of the scale scenario (a child process of bench/scenarios/scale.ts): the
// migrations, `size` background rows of each kind (seed-rows.ts, audit.ts), the measured fixtures
// (fixtures.ts, audit.ts), then the statistics PostgreSQL's autovacuum would have gathered by then. Writes the
// fixtures (tokens and ids) as JSON to the file given.
// Usage: DATABASE_URL=… SERVICE_DATA_DIR=… SECRET_KEY=… BASE_URL=… node bench/scale/seed.ts <size> <fixtures.json>
import fs from 'node:fs';
import { sql } from 'kysely';
import { loadConfig } from '../../src/config.ts';
import { createContext } from '../../src/context.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { seedAudit, seedAuditFixture } from './audit.ts';
import { seedFixtures } from './fixtures.ts';
import { seedBackground } from './seed-rows.ts';
import { seedSql } from './sql.ts';

const [sizeArg, out] = process.argv.slice(2);
const size = Number(sizeArg);
if (!Number.isInteger(size) || size < 1 || !out)
  throw new Error('usage: node bench/scale/seed.ts <size> <fixtures.json>');

const started = performance.now();
const log = (line: string) => process.stderr.write(`[seed ${size}] ${line}\n`);
const ctx = createContext(loadConfig(process.env));
const db = ctx.db.kysely;
await migrateToLatest(ctx.db);
const s = seedSql(ctx.db.dialect);
if (ctx.db.dialect === 'sqlite') {
  // This connection only, for the seed: random keys (token hashes, OAuth ids) land all over their
  // indexes, and with the default 2 MiB page cache nearly every insert would read a page from disk.
  await sql`pragma cache_size = -1048576`.execute(db);
  await sql`pragma synchronous = off`.execute(db);
}
const now = Math.floor(Date.now() / 1000);
const { userBase } = await sql<{ userBase: number | null }>`select max(id) as "userBase" from users`
  .execute(db)
  .then((r) => r.rows[0]);
await seedBackground(db, s, { size, now, userBase: Number(userBase ?? 0) }, log);
const t0 = performance.now();
const audit = await seedAudit(db, s, { size, now, retentionDays: ctx.config.auditRetentionDays });
log(
  audit
    ? `audit entries: ${((performance.now() - t0) / 1000).toFixed(1)} s`
    : 'audit entries: none (no audit log in this build)',
);
const fixtures = await seedFixtures(ctx, s, now);
await seedAuditFixture(db, s, fixtures.hooksTeamId, fixtures.callerId, now);
log(`fixtures: ${((performance.now() - started) / 1000).toFixed(1)} s since the start`);
// The measurements start on a database at rest: the seed is in the database file and on disk, not in
// a WAL the server would checkpoint, nor in dirty pages the kernel would write back (stalling the
// measured processes' own writes) while they are measured.
if (ctx.db.dialect === 'postgres') {
  await sql`vacuum analyze`.execute(db);
  await sql`checkpoint`.execute(db);
} else {
  await sql`pragma synchronous = full`.execute(db);
  await sql`pragma wal_checkpoint(truncate)`.execute(db);
}
fs.writeFileSync(out, JSON.stringify({ ...fixtures, audit }, null, 2));
log(`done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
await ctx.db.close();
