// A `node --test` reporter for `npm run test:fast`: each file's time and the group's counts, as one JSON
// document at the end. The runner balances its groups by these times on the next run and prints one
// summary over all groups (each group's spec reporter prints its own counts).
import type { TestEvent } from 'node:test/reporters';

export default async function* timings(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  const files: Record<string, number> = {};
  const counts = { tests: 0, pass: 0, fail: 0, skipped: 0 };
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { data } = event;
    if (data.nesting === 0 && data.file) files[data.file] = (files[data.file] ?? 0) + data.details.duration_ms;
    // Leaves only, as the spec reporter counts them: a suite is not a test.
    if (data.details.type === 'suite') continue;
    counts.tests++;
    if (data.skip !== undefined || data.todo !== undefined) counts.skipped++;
    else if (event.type === 'test:pass') counts.pass++;
    else counts.fail++;
  }
  yield JSON.stringify({ files, ...counts });
}
