// The bar `npm run bench` judges against: the table of issue 32 §2 ("The raised bar") as data, one
// row per line of the table, each naming the metric ids (bench/scenarios/*) it judges. A
// figure no row names is reported and not judged, except the few figures the table leaves out that
// keep a bound of their own (KEPT). The scale scenario judges its growth ratios itself
// (bench/scale/report.ts).
import { boundText, judge, judgedText, type Metric, type Target } from './report.ts';

export interface TableRow extends Target {
  /** The line of the table, as the issue words it. */
  metric: string;
  /** The ids of the figures the row judges. */
  ids: string[];
}

export const TABLE: TableRow[] = [
  {
    metric: '`/api/v1/me/` with a PAT on SQLite ÷ bare `node:http`',
    ids: ['me_sqlite'],
    better: 'higher',
    on: 'ratio',
    unit: '',
    must: 0.55,
    aim: 0.75,
  },
  {
    metric: 'the same on PostgreSQL + Redis ÷ bare',
    ids: ['me_pg'],
    better: 'higher',
    on: 'ratio',
    unit: '',
    must: 0.35,
    aim: 0.5,
  },
  {
    // An absolute bound on the service's own p99, with no allowance relative to bare's.
    metric: 'p99 at ~10k req/s paced',
    ids: ['me_sqlite_paced_p99'],
    better: 'lower',
    on: 'value',
    unit: 'ms',
    must: 1,
    aim: 0.5,
  },
  {
    metric: 'p99 of `/me` while 5 token issuances/s run ÷ idle p99 (five rounds, the worst one counts)',
    ids: ['issuance_p99'],
    better: 'lower',
    on: 'ratio',
    unit: '×',
    must: 2,
    aim: 1.5,
    counts: 'worst',
  },
  {
    metric: 'logging on ÷ off',
    ids: ['logging'],
    better: 'higher',
    on: 'ratio',
    unit: '',
    must: 0.9,
    aim: 0.97,
  },
  {
    // The harness measures concurrencies 1, 8, 32 and 128; 128 is outside the row and only reported.
    metric: 'webhook deliveries per worker ÷ a raw undici POST loop, SQLite, concurrency 1 and 8–32',
    ids: ['deliveries_sqlite_c1', 'deliveries_sqlite_c8', 'deliveries_sqlite_c32'],
    better: 'higher',
    on: 'ratio',
    unit: '',
    must: 0.45,
    aim: 0.65,
  },
  {
    metric: 'the same on PostgreSQL, concurrency 8',
    ids: ['deliveries_pg_c8'],
    better: 'higher',
    on: 'ratio',
    unit: '',
    must: 0.3,
    aim: 0.5,
  },
  {
    // Embedded mode (SQLite, in-process worker) at both paced rates.
    metric: 'event → first attempt p99',
    ids: ['latency_100', 'latency_1000'],
    better: 'lower',
    on: 'value',
    unit: 'ms',
    must: 5,
    aim: 2,
  },
  {
    metric: 'a 10k-event burst drained',
    ids: ['burst'],
    better: 'lower',
    on: 'value',
    unit: 'ms',
    must: 1000,
    aim: 500,
  },
  {
    metric: 'SNS notifications/s ÷ a bare sink',
    ids: ['sns'],
    better: 'higher',
    on: 'ratio',
    unit: '',
    must: 0.2,
    aim: 0.3,
  },
  {
    metric: 'start to listening',
    ids: ['startup'],
    better: 'lower',
    on: 'value',
    unit: 'ms',
    must: 250,
    aim: 150,
  },
  {
    metric: 'RSS at listen ÷ bare',
    ids: ['rss'],
    better: 'lower',
    on: 'ratio',
    unit: '×',
    must: 1.3,
    aim: 1.2,
  },
  {
    // Both protocol revisions the endpoint serves are a `tools/call get_me`.
    metric: 'MCP `tools/call get_me` ÷ REST `/me`',
    ids: ['mcp_get_me', 'mcp_get_me_2025'],
    better: 'higher',
    on: 'ratio',
    unit: '',
    must: 0.3,
    aim: 0.5,
  },
  {
    metric: 'webhook deliveries signed ÷ unsigned, per CPU-second',
    ids: ['signing'],
    better: 'higher',
    on: 'ratio',
    unit: '',
    must: 0.95,
    aim: 0.98,
  },
  {
    metric: 'metrics on ÷ off',
    ids: ['metrics'],
    better: 'higher',
    on: 'ratio',
    unit: '',
    must: 0.95,
    aim: 0.98,
  },
];

/** Figures the table does not name that keep the bound they had: distributed delivery latency. */
export const KEPT: TableRow[] = [
  {
    metric: 'event → first attempt p99, distributed (PostgreSQL, `svc worker`, LISTEN/NOTIFY)',
    ids: ['distributed_100'],
    better: 'lower',
    on: 'value',
    unit: 'ms',
    must: 50,
    aim: 20,
  },
];

export function targetFor(id: string, rows: readonly TableRow[] = [...TABLE, ...KEPT]): Target | undefined {
  const row = rows.find((r) => r.ids.includes(id));
  if (!row) return undefined;
  const { better, must, aim, on, unit, counts } = row;
  return { better, must, aim, on, unit, ...(counts ? { counts } : {}) };
}

/**
 * Every metric with the target its id has in the table (or none: reported, not judged), judged. A verdict
 * the metric carried is replaced (a results file written against older bounds is read against these),
 * except `n/a` and the FAIL of a section that failed (`failed_<section>`, which no row names).
 */
export function judgeAgainstTable(metrics: readonly Metric[], rows?: readonly TableRow[]): Metric[] {
  return metrics.map((metric) => {
    const target = targetFor(metric.id, rows);
    if (!target) {
      const { target: _target, judged: _judged, reads: _reads, ...rest } = metric;
      return metric.id.startsWith('failed_')
        ? rest
        : { ...rest, verdict: metric.verdict === 'n/a' ? 'n/a' : undefined };
    }
    const { target: _old, judged: _judged, reads: _reads, verdict, ...rest } = metric;
    return judge({ ...rest, target, ...(verdict === 'n/a' ? { verdict } : {}) });
  });
}

/**
 * The lines under the verdict table: the musts and aims met, the figures that fail their must, and the rows of
 * the table this run did not measure (a partial or quick run).
 */
export function tableSummary(metrics: readonly Metric[], rows: readonly TableRow[] = TABLE): string {
  const judged = metrics.filter((m) => rows.some((r) => r.ids.includes(m.id)));
  const count = (v: string) => judged.filter((m) => m.verdict === v).length;
  const failed = judged.filter((m) => m.verdict === 'FAIL');
  const unmeasured = rows.filter((r) => !r.ids.some((id) => metrics.some((m) => m.id === id)));
  const lines = [
    `Against issue 32's table: ${count('PASS aim')} aim, ${count('PASS must')} must only, ${failed.length} FAIL` +
      `, ${count('contended')} contended, ${count('n/a')} n/a (of ${judged.length} judged figures).`,
  ];
  for (const m of failed) {
    lines.push(`- FAIL ${m.id}: ${judgedText(m) || '—'} against must ${boundText(m.target!, m.target!.must)}`);
  }
  if (unmeasured.length) lines.push(`Not measured in this run: ${unmeasured.map((r) => r.metric).join('; ')}.`);
  return lines.join('\n');
}
