// Where the issuance scenario finds the hashing (bench/scenarios/issuance.ts, threadShares): the CPU
// each kind of thread spent between two /proc snapshots of the server's threads.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { threadCpu } from '../../bench/lib/proc.ts';
import { threadShares } from '../../bench/scenarios/issuance.ts';

it('splits the CPU spent between the main thread, the argon2 threads and the rest, and keeps their nice value', () => {
  const before = [
    { tid: 1, name: 'MainThread', nice: 0, ticks: 100 },
    { tid: 2, name: 'argon2', nice: 10, ticks: 5 },
    { tid: 3, name: 'V8Worker', nice: 0, ticks: 7 },
  ];
  const after = [
    { tid: 1, name: 'MainThread', nice: 0, ticks: 130 },
    { tid: 2, name: 'argon2', nice: 10, ticks: 25 },
    { tid: 3, name: 'V8Worker', nice: 0, ticks: 8 },
    // A hash thread started during the measurement: all of its time counts.
    { tid: 4, name: 'argon2', nice: 10, ticks: 4 },
  ];
  assert.deepEqual(threadShares(before, after), { main: 300, hash: 240, other: 10, hashNice: 10 });
});

it('reads this process’s threads from /proc, the main thread by its name', () => {
  const threads = threadCpu(process.pid);
  const main = threads.find((t) => t.tid === process.pid);
  assert.equal(main?.name, 'MainThread');
  assert.ok(threads.every((t) => Number.isInteger(t.nice) && t.ticks >= 0));
});
