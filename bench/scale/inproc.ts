// In-process parts of the scale scenario, run as a child of bench/scenarios/scale.ts pinned to the
// server's CPU, on a seeded database. One JSON config as the argument; one "BENCH_RESULT {json}"
// line on stdout.
//   suppression   the pre-send guard (guardBatch, one query per batch) for `seconds`, one message
//                 of three recipients per batch, one of them suppressed: checks per second, the
//                 p99 of one check and this process's CPU per check (on PostgreSQL the database's
//                 share is not in it)
//   purge         the housekeeping purges of expired rows (idempotency records, delivery logs and
//                 their events, audit entries): rows deleted per second, and
//                 this process's CPU per row
//   sizes         bytes on disk (table and its indexes) per row of the delivery log (and audit log)
import { sql } from 'kysely';
import { loadConfig } from '../../src/config.ts';
import { createContext } from '../../src/context.ts';
import { purgeAuditEntries } from '../../src/audit/store.ts';
import { purgeExpiredIdempotencyKeys } from '../../src/http/idempotency.ts';
import { guardBatch } from '../../src/mail/guard.ts';
import { purgeDeliveryLogs } from '../../src/webhooks/queue.ts';
import { percentile } from '../lib/stats.ts';
import { AUDIT_TABLE, hasAuditLog } from './audit.ts';

interface Config {
  mode: 'suppression' | 'purge' | 'sizes';
  seconds?: number;
  /** purge: wait this long first (the load on /me is measured from before the purge starts). */
  delayMs?: number;
  /** suppression: how many suppressed addresses were seeded (suppressed-1 … suppressed-N). */
  suppressed?: number;
}

const config = JSON.parse(process.argv[2]) as Config;
const ctx = createContext(loadConfig(process.env));
const db = ctx.db.kysely;
const emit = (line: Record<string, unknown>) => process.stdout.write(`BENCH_RESULT ${JSON.stringify(line)}\n`);

async function suppression() {
  const n = config.suppressed!;
  const latencies: number[] = [];
  let blocked = 0;
  // Warm-up: statement preparation, JIT.
  for (let i = 0; i < 200; i++) await guardBatch(db, [{ to: [`warm-${i}@example.com`], cc: [], bcc: [] }]);
  const end = performance.now() + config.seconds! * 1000;
  const cpu0 = process.cpuUsage();
  for (let i = 0; performance.now() < end; i++) {
    // A stride through the seeded addresses, so the lookups land all over the index.
    const suppressed = `suppressed-${((i * 7919) % n) + 1}@example.com`;
    const t0 = performance.now();
    const [guarded] = await guardBatch(db, [
      { to: [`fresh-${i}@example.com`, suppressed], cc: [], bcc: [`other-${i}@example.com`] },
    ]);
    latencies.push(performance.now() - t0);
    blocked += guarded.suppressed.length;
  }
  const cpu = process.cpuUsage(cpu0);
  if (blocked !== latencies.length)
    throw new Error(`${latencies.length - blocked} suppressed addresses were not found suppressed`);
  const seconds = latencies.reduce((a, b) => a + b, 0) / 1000;
  const cpuUsPerCheck = (cpu.user + cpu.system) / latencies.length;
  emit({
    checks: latencies.length,
    perSecond: latencies.length / seconds,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    cpuUsPerCheck,
  });
}

async function purge() {
  await new Promise((resolve) => setTimeout(resolve, config.delayMs ?? 0));
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const idempotency = await purgeExpiredIdempotencyKeys(db);
  const { deliveries, events } = await purgeDeliveryLogs(db, ctx.config.webhooks.logRetentionDays);
  const audit = (await hasAuditLog(db, ctx.db.dialect))
    ? await purgeAuditEntries(db, ctx.config.auditRetentionDays)
    : 0;
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const rows = idempotency + deliveries + events + audit;
  if (rows === 0) throw new Error('the purge found nothing expired: was the database seeded with expired rows?');
  // CPU per row: SQLite's work is in this process; on PostgreSQL most of it is the server's.
  emit({
    rows,
    seconds,
    perSecond: rows / seconds,
    cpuUsPerRow: (cpu.user + cpu.system) / rows,
    idempotency,
    deliveries,
    events,
    audit,
  });
}

/** Bytes of `table` with its indexes, and its row count. */
async function footprint(table: string): Promise<{ bytes: number; rows: number }> {
  const { rows } = await sql<{ n: number }>`select count(*) as n from ${sql.table(table)}`.execute(db);
  const count = Number(rows[0].n);
  if (ctx.db.dialect === 'postgres') {
    const size = await sql<{ bytes: number }>`select pg_total_relation_size(${table}::regclass) as bytes`.execute(db);
    return { bytes: Number(size.rows[0].bytes), rows: count };
  }
  const size = await sql<{ bytes: number }>`select sum(pgsize) as bytes from dbstat
    where name in (select name from sqlite_master where tbl_name = ${table})`.execute(db);
  return { bytes: Number(size.rows[0].bytes), rows: count };
}

async function sizes() {
  const database =
    ctx.db.dialect === 'postgres'
      ? Number(
          (await sql<{ bytes: number }>`select pg_database_size(current_database()) as bytes`.execute(db)).rows[0]
            .bytes,
        )
      : Number(
          (
            await sql<{
              bytes: number;
            }>`select page_count * page_size as bytes from pragma_page_count(), pragma_page_size()`.execute(db)
          ).rows[0].bytes,
        );
  const deliveries = await footprint('webhook_deliveries');
  const audit = (await hasAuditLog(db, ctx.db.dialect)) ? await footprint(AUDIT_TABLE) : null;
  const perMillion = (f: { bytes: number; rows: number }) => (f.bytes / f.rows) * 1e6;
  emit({
    databaseBytes: database,
    deliveries,
    deliveriesBytesPerMillion: perMillion(deliveries),
    audit,
    auditBytesPerMillion: audit ? perMillion(audit) : null,
  });
}

try {
  if (config.mode === 'suppression') await suppression();
  else if (config.mode === 'purge') await purge();
  else if (config.mode === 'sizes') await sizes();
  await ctx.db.close();
} catch (error) {
  process.stderr.write(`${(error as Error).stack ?? error}\n`);
  process.exit(1);
}
