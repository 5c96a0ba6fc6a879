// The SQLite checkpoint thread keeps the WAL bounded while commits never stop: a PASSIVE checkpoint
// alone never lets the writer start the WAL over when a commit lands during every checkpoint, and
// the file then grows by every commit's pages for as long as the load lasts.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { startCheckpointer } from '../../src/db/sqlite-checkpointer.ts';

const PAGE_BYTES = 4096;
const FRAME_BYTES = 24 + PAGE_BYTES;
const RESTART_AFTER_FRAMES = 256;

describe('SQLite checkpoint thread', () => {
  it('starts the WAL over once it passes the limit, under a steady stream of commits, losing none', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-ckpt-'));
    const file = path.join(dir, 'db.sqlite3');
    const db = new DatabaseSync(file, { timeout: 5000 });
    db.exec(
      'PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; create table t (id integer primary key, body text not null)',
    );
    const checkpointer = startCheckpointer(db, file, { startAfterMs: 0, restartAfterFrames: RESTART_AFTER_FRAMES });
    try {
      const insert = db.prepare('insert into t (body) values (?)');
      const walFrames = () => Math.max(0, Math.floor((fs.statSync(`${file}-wal`).size - 32) / FRAME_BYTES));
      // Until the thread has turned SQLite's own checkpoint (in the commit) off.
      const autocheckpoint = () => Number(Object.values(db.prepare('pragma wal_autocheckpoint').get() as object)[0]);
      const deadline = Date.now() + 10_000;
      while (autocheckpoint() !== 0) {
        assert.ok(Date.now() < deadline, 'the checkpoint thread started');
        await sleep(20);
      }
      // Two commits about every millisecond for two seconds: some land during every checkpoint.
      // Without the restart the WAL ends up with about one frame per commit; with it, it stays near
      // the limit plus what one checkpoint interval (100 ms) adds, a few hundred frames. Half the
      // commits leaves room for a slow thread: it runs at nice 10, and under CI's parallel test
      // files it falls well behind.
      // A count of commits rather than a time: under load the loop's 1 ms sleeps stretch, and the
      // test is about how large the WAL grows per commit, not about the rate.
      let commits = 0;
      let largest = 0;
      const until = Date.now() + 60_000;
      while (commits < 2_000 && Date.now() < until) {
        insert.run(`row ${commits++}`);
        insert.run(`row ${commits++}`);
        largest = Math.max(largest, walFrames());
        await sleep(1);
      }
      assert.ok(commits >= 2_000, `the stream made ${commits} commits`);
      assert.ok(
        largest < commits / 2,
        `the WAL held at most ${largest} frames (limit ${RESTART_AFTER_FRAMES}) over ${commits} commits`,
      );
      assert.equal(Number(Object.values(db.prepare('select count(*) from t').get() as object)[0]), commits);
    } finally {
      await checkpointer.stop();
      db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
