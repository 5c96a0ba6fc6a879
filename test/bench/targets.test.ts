// The benchmark's verdicts against issue 32's table (bench/lib/targets.ts): which figures are judged,
// which way, against which bound, and what the printed table and the line under it say.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { markdownTable, type Metric } from '../../bench/lib/report.ts';
import { judgeAgainstTable, tableSummary, TABLE, targetFor } from '../../bench/lib/targets.ts';

function metric(id: string, fields: Partial<Metric> = {}): Metric {
  return { id, label: id, value: null, unit: '', baseline: null, ratio: null, rounds: 5, dropped: 0, ...fields };
}

const verdictOf = (m: Metric) => judgeAgainstTable([m])[0].verdict;

describe('judging against the table', () => {
  it('a higher-is-better ratio: FAIL below the must, PASS must between, PASS aim at or above the aim', () => {
    assert.equal(verdictOf(metric('me_sqlite', { ratio: 0.54 })), 'FAIL');
    assert.equal(verdictOf(metric('me_sqlite', { ratio: 0.55 })), 'PASS must');
    assert.equal(verdictOf(metric('me_sqlite', { ratio: 0.74 })), 'PASS must');
    assert.equal(verdictOf(metric('me_sqlite', { ratio: 0.75 })), 'PASS aim');
  });

  it('the paced p99 is an absolute bound in ms, lower is better, whatever its ratio to bare', () => {
    assert.equal(verdictOf(metric('me_sqlite_paced_p99', { value: 0.4, ratio: 9 })), 'PASS aim');
    assert.equal(verdictOf(metric('me_sqlite_paced_p99', { value: 0.9, ratio: 1 })), 'PASS must');
    assert.equal(verdictOf(metric('me_sqlite_paced_p99', { value: 1.2, ratio: 1 })), 'FAIL');
  });

  it('judges only the delivery concurrencies the table names', () => {
    for (const id of ['deliveries_sqlite_c1', 'deliveries_sqlite_c8', 'deliveries_sqlite_c32', 'deliveries_pg_c8'])
      assert.ok(targetFor(id), id);
    for (const id of ['deliveries_sqlite_c128', 'deliveries_pg_c1', 'deliveries_pg_c32', 'deliveries_pg_c128'])
      assert.equal(targetFor(id), undefined, id);
    assert.equal(verdictOf(metric('deliveries_sqlite_c128', { ratio: 0.1 })), undefined);
    assert.equal(verdictOf(metric('deliveries_pg_c8', { ratio: 0.29 })), 'FAIL');
  });

  it('reports a figure the table does not name without a target or verdict; distributed latency keeps its own', () => {
    const [cpu] = judgeAgainstTable([metric('cpu_sqlite', { value: 40, unit: 'µs' })]);
    assert.equal(cpu.target, undefined);
    assert.equal(cpu.verdict, undefined);
    assert.equal(verdictOf(metric('distributed_100', { value: 30, unit: 'ms' })), 'PASS must');
    assert.equal(verdictOf(metric('distributed_100', { value: 60, unit: 'ms' })), 'FAIL');
  });

  it('replaces a target a scenario set with the table’s', () => {
    const [m] = judgeAgainstTable([
      metric('logging', { ratio: 0.88, target: { better: 'higher', must: 0.5, aim: 0.6, on: 'ratio', unit: '' } }),
    ]);
    assert.equal(m.target?.must, 0.9);
    assert.equal(m.verdict, 'FAIL');
  });

  it('a figure with no clean round is contended, with what it would read', () => {
    const [m] = judgeAgainstTable([metric('me_sqlite', { ratio: 0.3, rounds: 0, dropped: 1 })]);
    assert.equal(m.verdict, 'contended');
    assert.equal(m.reads, 'FAIL');
  });

  it('keeps n/a and a failed section as they are', () => {
    assert.equal(verdictOf(metric('me_pg', { verdict: 'n/a' })), 'n/a');
    assert.equal(verdictOf(metric('failed_http', { verdict: 'FAIL' })), 'FAIL');
  });

  it('every row names at least one figure, and no figure is named twice', () => {
    const ids = TABLE.flatMap((row) => row.ids);
    assert.ok(TABLE.every((row) => row.ids.length > 0));
    assert.equal(new Set(ids).size, ids.length);
    assert.equal(TABLE.length, 15);
  });
});

describe('the printed table', () => {
  it('shows must, aim, the judged figure and the verdict; the line under it names the failures and what was not measured', () => {
    const metrics = judgeAgainstTable([
      metric('me_sqlite', { value: 30000, unit: 'req/s', baseline: 60000, ratio: 0.5, ratioRange: [0.45, 0.6] }),
      metric('startup', { value: 180, unit: 'ms' }),
      metric('cpu_sqlite', { value: 40, unit: 'µs' }),
    ]);
    const table = markdownTable(metrics);
    assert.match(
      table,
      /\| me_sqlite \| 30,000 req\/s \| 60,000 req\/s \| 0\.50 \(0\.45–0\.60\) \| 5 \| ≥ 0\.55 \| ≥ 0\.75 \| 0\.50 \| FAIL \|/,
    );
    assert.match(table, /\| startup \| 180 ms .* \| ≤ 250 ms \| ≤ 150 ms \| 180 ms \| PASS must \|/);
    assert.match(table, /\| cpu_sqlite \| 40\.0 µs \| — \| — \| 5 \|  \|  \|  \|  \|/);
    const summary = tableSummary(metrics);
    assert.match(summary, /0 aim, 1 must only, 1 FAIL/);
    assert.match(summary, /FAIL me_sqlite: 0\.50 against must ≥ 0\.55/);
    assert.match(summary, /Not measured in this run: .*logging on ÷ off/);
    assert.doesNotMatch(summary, /Not measured in this run: .*start to listening/);
  });
});
