// Prints the Markdown table of a results file (bench/results/<date>.json), with the machine line,
// its figures judged against the current bar (issue 32's table, bench/lib/targets.ts) whatever bounds
// they were judged against when the file was written; a scale run's file keeps its own verdicts:
//   node bench/table.ts bench/results/2026-11-22.json
import fs from 'node:fs';
import { markdownTable, type Metric } from './lib/report.ts';
import { judgeAgainstTable, tableSummary } from './lib/targets.ts';

const file = process.argv[2];
if (!file) {
  process.stderr.write('usage: node bench/table.ts bench/results/<date>.json\n');
  process.exit(2);
}
const result = JSON.parse(fs.readFileSync(file, 'utf8'));
const m = result.machine;
const metrics: Metric[] = result.scale ? result.metrics : judgeAgainstTable(result.metrics);
process.stdout.write(
  `${result.mode === 'full' ? 'Full' : 'Quick'} run of ${result.date.slice(0, 16).replace('T', ' ')} UTC, ${m.cpus} × ${m.cpu}, ` +
    `${m.memoryGiB} GiB, Linux ${m.kernel}, Node ${m.node}, ${m.wrk.split(' ')[0]} ${m.wrk.split(' ')[1] ?? ''}`.trim() +
    `; ${result.durationSeconds} s.\n\n${markdownTable(metrics)}\n${result.scale ? '' : `\n${tableSummary(metrics)}\n`}`,
);
