// The PAT cache's work that follows time, not requests, as docs/deploy.md ("Capacity") states it: each
// token's last_used_at written at most once a minute, 400 tokens a statement; on PostgreSQL every cached
// token re-read each 0.5 s, 200 a statement (the 1 s bound on writes nothing announces). SQLite has no
// re-reads (PRAGMA data_version tells it of other processes' commits).
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { bearer, startApp, type TestApp } from '../support/app.ts';
import { PAT_LAST_USED, PAT_REREAD, sqlRecorder, type Sent } from './store-recorders.ts';

let t: TestApp;
before(async () => {
  t = await startApp();
});
after(() => t?.close());

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

it('450 tokens in use: last_used_at once each, ≤ 400 a statement; PostgreSQL re-reads each at most every 0.5 s, ≤ 200 a statement', async () => {
  const user = await t.user();
  const tokens: string[] = [];
  for (let i = 0; i < 450; i++) tokens.push(await t.token(user.id, ['read:profile']));
  const sql = sqlRecorder(t.ctx.db, t.env.DATABASE_URL);
  const started = Date.now();
  const useAll = async () => {
    for (const token of tokens) {
      const res = await t.inject({ url: '/api/v1/me/', headers: bearer(token) });
      assert.equal(res.statusCode, 200, res.body);
    }
  };
  await useAll();
  await pause(1_600);
  await useAll(); // used again within the minute: nothing more to write
  await pause(1_200);
  // last_used_at: `case id when $ then $ …` and `id in (…)`: three parameters a token, and the threshold.
  const tokensWritten = (sent: Sent[]) =>
    sent.filter((s) => PAT_LAST_USED.test(s.sql)).map((s) => (s.parameters.length - 1) / 3);
  const tokensReread = (sent: Sent[]) =>
    new Set(sent.filter((s) => PAT_REREAD.test(s.sql)).flatMap((s) => s.parameters)).size;
  // The timed work runs on its own clock: on a loaded machine a round of re-reads (three statements)
  // can outlast the pause, so the window stays open until the work is seen (at most 10 s more).
  const recorded = sql.take();
  const settled = () =>
    tokensWritten(recorded).reduce((a, b) => a + b, 0) >= 450 &&
    (t.ctx.db.dialect === 'sqlite' || tokensReread(recorded) >= 450);
  for (const deadline = Date.now() + 10_000; !settled() && Date.now() < deadline;) {
    await pause(100);
    recorded.push(...sql.take());
  }
  const elapsed = Date.now() - started;
  sql.stop();
  const written = tokensWritten(recorded);
  assert.ok(written.length > 0 && written.every((n) => n <= 400), `tokens per UPDATE: ${written}`);
  assert.equal(
    written.reduce((a, b) => a + b, 0),
    450,
    `tokens per UPDATE: ${written}`,
  );
  const rereads = recorded.filter((s) => PAT_REREAD.test(s.sql));
  if (t.ctx.db.dialect === 'sqlite') return assert.deepEqual(rereads, []);
  assert.ok(
    rereads.length > 0 && rereads.every((s) => s.parameters.length <= 200),
    `ids per re-read: ${rereads.map((s) => s.parameters.length)}`,
  );
  const perToken = new Map<unknown, number>();
  for (const s of rereads) for (const id of s.parameters) perToken.set(id, (perToken.get(id) ?? 0) + 1);
  // Every token in use is re-read (450 tokens: three statements a round), none more often than every 0.5 s.
  assert.equal(perToken.size, 450);
  const most = Math.max(...perToken.values());
  assert.ok(most <= Math.ceil(elapsed / 500) + 1, `a token re-read ${most} times in ${elapsed} ms`);
});
