// Prints the Markdown table of a results file (bench/results/<date>.json), with the machine line:
//   node bench/table.ts bench/results/2026-11-22.json
import fs from 'node:fs';
import { markdownTable } from './lib/report.ts';

const file = process.argv[2];
if (!file) {
  process.stderr.write('usage: node bench/table.ts bench/results/<date>.json\n');
  process.exit(2);
}
const result = JSON.parse(fs.readFileSync(file, 'utf8'));
const m = result.machine;
process.stdout.write(
  `${result.mode === 'full' ? 'Full' : 'Quick'} run of ${result.date.slice(0, 16).replace('T', ' ')} UTC, ${m.cpus} × ${m.cpu}, ` +
    `${m.memoryGiB} GiB, Linux ${m.kernel}, Node ${m.node}, ${m.wrk.split(' ')[0]} ${m.wrk.split(' ')[1] ?? ''}`.trim() +
    `; ${result.durationSeconds} s.\n\n${markdownTable(result.metrics)}\n`,
);
