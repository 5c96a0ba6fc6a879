// The database layer's promises: SQLite in WAL mode with foreign keys and a busy timeout; the
// foundation tables' constraints (case-insensitive unique e-mail, unique slug, one membership per
// team and user, the three roles, unique token hash) hold on both databases.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { createUser } from '../../src/accounts/users.ts';
import { ConflictError } from '../../src/util/domain-errors.ts';
import { openDb } from '../../src/db/connection.ts';
import { LOCK_POLL_MS } from '../../src/db/sqlite-dialect.ts';
import { startApp, TEST_PASSWORD, type TestApp } from '../support/app.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

describe('SQLite connection', () => {
  it('opens the file in WAL mode with foreign keys on and a busy timeout, creating its folder', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-conn-'));
    const file = path.join(dir, 'nested', 'db.sqlite3');
    const db = openDb(`sqlite:${file}`);
    try {
      const pragma = async (name: string) =>
        Object.values((await sql.raw(`pragma ${name}`).execute(db.kysely)).rows[0] as object)[0];
      assert.equal(await pragma('journal_mode'), 'wal');
      assert.equal(await pragma('foreign_keys'), 1);
      // SQLite waits for another process's lock in steps of this length; the dialect keeps waiting
      // while others commit, up to SERVICE_SQLITE_BUSY_TIMEOUT_MS without progress (sqlite-busy.test.ts).
      assert.equal(await pragma('busy_timeout'), LOCK_POLL_MS);
      assert.ok(fs.existsSync(file));
      assert.equal(db.dialect, 'sqlite');
    } finally {
      await db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it(
    'checkpoints on a thread of lower CPU priority once it runs; the event loop no longer checkpoints (Linux)',
    { skip: process.platform !== 'linux' },
    async () => {
      const niceOf = (tid: string) =>
        Number(fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1].split(' ')[16]);
      const lowered = () => fs.readdirSync('/proc/self/task').filter((tid) => niceOf(tid) === 10).length;
      const before = lowered();
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-conn-'));
      const db = openDb(`sqlite:${path.join(dir, 'db.sqlite3')}`);
      try {
        const autocheckpoint = async () =>
          Number(Object.values((await sql.raw('pragma wal_autocheckpoint').execute(db.kysely)).rows[0] as object)[0]);
        assert.equal(await autocheckpoint(), 1000, 'SQLite checkpoints in commits until the thread runs');
        // The thread starts two seconds after the database opens and turns the automatic checkpoint off.
        const deadline = Date.now() + 10_000;
        while ((await autocheckpoint()) !== 0) {
          assert.ok(Date.now() < deadline, 'the checkpoint thread started');
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        assert.equal(lowered(), before + 1, 'one more thread at nice 10');
        assert.equal(niceOf(String(process.pid)), 0, 'the main thread keeps its priority');
        // Once close() resolves the thread is gone, so the files can be removed at once (a test's
        // cleanup once failed with ENOTEMPTY: the thread still had the database open).
        await db.close();
        assert.equal(lowered(), before, 'the checkpoint thread has exited');
      } finally {
        await db.close();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  );

  it('sqlite::memory: works', async () => {
    const db = openDb('sqlite::memory:');
    try {
      const { rows } = await sql<{ one: number }>`select 1 as one`.execute(db.kysely);
      assert.deepEqual(
        rows.map((r) => ({ ...r })),
        [{ one: 1 }],
      );
    } finally {
      await db.close();
    }
  });
});

describe('foundation table constraints', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp();
  });
  after(() => t.close());

  const rejects = (promise: Promise<unknown>) => assert.rejects(promise, (error: Error) => error instanceof Error);

  it('e-mail is unique regardless of case (lookup and index)', async () => {
    await createUser(t.ctx.db.kysely, { email: 'Mixed.Case@Example.com', password: TEST_PASSWORD });
    await assert.rejects(
      createUser(t.ctx.db.kysely, { email: 'mixed.case@example.COM', password: TEST_PASSWORD }),
      ConflictError,
    );
    const now = new Date().toISOString();
    // The index itself refuses a duplicate that bypasses createUser (addresses are stored lower-cased).
    await rejects(
      t.ctx.db.kysely
        .insertInto('users')
        .values({
          email: 'mixed.case@example.com',
          password_hash: 'x',
          first_name: '',
          last_name: '',
          display_name: '',
          email_verified_at: null,
          is_active: 1,
          is_staff: 0,
          created_at: now,
          updated_at: now,
        })
        .execute(),
    );
    const rows = await t.ctx.db.kysely.selectFrom('users').select('email').where('email', 'like', '%mixed%').execute();
    assert.deepEqual(
      rows.map((r) => r.email),
      ['mixed.case@example.com'],
    );
  });

  it('a team slug is unique, a membership is unique per team and user, and the role is one of three', async () => {
    const owner = await t.user();
    const team = await t.team(owner.id, 'Constraint team');
    const now = new Date().toISOString();
    const db = t.ctx.db.kysely;
    await rejects(
      db
        .insertInto('teams')
        .values({
          id: '22222222-2222-2222-2222-222222222222',
          name: 'x',
          slug: team.slug,
          is_active: 1,
          created_at: now,
          updated_at: now,
        })
        .execute(),
    );
    await rejects(
      db
        .insertInto('memberships')
        .values({ team_id: team.id, user_id: owner.id, role: 'member', joined_at: now })
        .execute(),
    );
    const other = await t.user();
    await rejects(
      db
        .insertInto('memberships')
        .values({ team_id: team.id, user_id: other.id, role: 'superuser' as 'member', joined_at: now })
        .execute(),
    );
    // Foreign keys are enforced (on SQLite too).
    await rejects(
      db
        .insertInto('memberships')
        .values({ team_id: '33333333-3333-3333-3333-333333333333', user_id: other.id, role: 'member', joined_at: now })
        .execute(),
    );
    const count = await db
      .selectFrom('memberships')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('team_id', '=', team.id)
      .executeTakeFirstOrThrow();
    assert.equal(Number(count.n), 1);
  });

  it('only the SHA-256 of a token is stored, with a display prefix; the hash is unique', async () => {
    const user = await t.user();
    const raw = await t.token(user.id, ['read:profile']);
    const row = await t.ctx.db.kysely
      .selectFrom('personal_access_tokens')
      .selectAll()
      .where('user_id', '=', user.id)
      .executeTakeFirstOrThrow();
    const { createHash } = await import('node:crypto');
    assert.equal(row.token_hash, createHash('sha256').update(raw).digest('hex'));
    assert.equal(row.token_prefix, raw.slice(0, 12));
    assert.ok(!JSON.stringify(row).includes(raw), 'the raw token is stored nowhere');
    const { id: _id, ...copy } = row;
    await rejects(t.ctx.db.kysely.insertInto('personal_access_tokens').values(copy).execute());
  });
});
