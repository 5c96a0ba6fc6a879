// When SQLite's wait for the write lock runs out (another process holds it for longer than
// SERVICE_SQLITE_BUSY_TIMEOUT_MS), nothing is half-written: an API write is answered 503 problem
// details with Retry-After, a CLI command prints one line and exits 1, and the same write succeeds
// once the lock is free. Reads go on meanwhile (WAL). The lock is held by a connection of this test
// process, as another process would hold it.
import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, it } from 'node:test';
import { TEST_PASSWORD, bearer, startApp, type TestApp } from '../support/app.ts';
import { svc } from '../cli/cli-helpers.ts';

const sqliteOnly = process.env.TEST_DATABASE_URL ? 'SQLite only (PostgreSQL has no database-wide write lock)' : false;

describe(
  'SQLite: the write lock held by another process for longer than the busy timeout',
  { skip: sqliteOnly },
  () => {
    let t: TestApp;
    let url: string;
    let owner: { id: number; email: string };
    let token: string;
    let team: { id: string };
    let holder: DatabaseSync;
    let refresh: string;
    const env = {
      SERVICE_SQLITE_BUSY_TIMEOUT_MS: '100',
      SERVICE_WEBHOOKS_ENABLED: 'true',
      SERVICE_WEBHOOKS_ALLOWED_CIDRS: '127.0.0.1/32',
    };

    before(async () => {
      t = await startApp(env);
      owner = await t.user({ firstName: 'Before' });
      token = await t.token(owner.id, ['read:profile', 'write:profile', 'write:teams', 'webhooks:manage']);
      team = await t.team(owner.id);
      // A member, so that a profile change emits an event (an outbox row that must not appear either).
      await t.member(team.id, (await t.user()).id, 'member');
      url = await t.listen();
      const issued = await fetch(`${url}/api/auth/token/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: owner.email, password: TEST_PASSWORD }),
      });
      assert.equal(issued.status, 200);
      refresh = (await issued.json()).refresh;
      holder = new DatabaseSync(t.env.DATABASE_URL.slice('sqlite:'.length));
    });
    after(async () => {
      holder.close();
      await t.close();
    });

    /** Runs `during` while `holder` has the write lock, as another process's open write transaction would. */
    async function withLockHeld<T>(during: () => Promise<T>): Promise<T> {
      holder.exec('BEGIN IMMEDIATE');
      try {
        return await during();
      } finally {
        holder.exec('ROLLBACK');
      }
    }

    const writes = () => [
      { method: 'PATCH', path: '/api/v1/me/', body: { first_name: 'After' }, ok: 200 },
      { method: 'POST', path: '/api/v1/teams/', body: { name: 'Blocked team' }, ok: 201 },
      {
        method: 'POST',
        path: `/api/v1/teams/${team.id}/webhooks/`,
        body: { url: 'https://127.0.0.1:9/hook', events: ['*'] },
        ok: 201,
      },
      // Refused, the refresh token is not spent: it still works once the lock is free.
      { method: 'POST', path: '/api/auth/token/refresh/', body: { refresh }, ok: 200 },
    ];
    const send = (write: ReturnType<typeof writes>[number]) =>
      fetch(`${url}${write.path}`, {
        method: write.method,
        headers: { ...(write.path.startsWith('/api/v1/') ? bearer(token) : {}), 'content-type': 'application/json' },
        body: JSON.stringify(write.body),
      });

    async function state() {
      const db = t.ctx.db.kysely;
      return {
        teams: (await db.selectFrom('teams').select('name').orderBy('name').execute()).map((row) => row.name),
        firstName: (
          await db.selectFrom('users').select('first_name').where('id', '=', owner.id).executeTakeFirstOrThrow()
        ).first_name,
        subscriptions: (await db.selectFrom('webhook_subscriptions').select('id').execute()).length,
        events: (await db.selectFrom('events').select('id').execute()).length,
        refreshTokens: await db
          .selectFrom('jwt_refresh_tokens')
          .select(['token_hash', 'used_at'])
          .orderBy('token_hash')
          .execute(),
      };
    }

    it('an API write is 503 problem details with Retry-After and changes nothing; a read is answered meanwhile; the retry succeeds', async () => {
      const before = await state();
      await withLockHeld(async () => {
        for (const write of writes()) {
          const res = await send(write);
          const body = await res.json();
          assert.equal(res.status, 503, `${write.method} ${write.path}: ${JSON.stringify(body)}`);
          assert.equal(res.headers.get('retry-after'), '1');
          assert.match(String(res.headers.get('content-type')), /^application\/problem\+json/);
          assert.ok(res.headers.get('x-request-id'));
          assert.equal(body.status, 503);
          assert.equal(body.title, 'Service Unavailable');
          assert.match(body.detail, /database is busy/);
          assert.equal(body.request_id, res.headers.get('x-request-id'));
        }
        const me = await fetch(`${url}/api/v1/me/`, { headers: bearer(token) });
        assert.equal(me.status, 200, 'reads do not wait for the writer');
        assert.equal((await me.json()).first_name, 'Before');
      });
      assert.deepEqual(await state(), before, 'nothing of the refused writes was written');
      for (const write of writes())
        assert.equal((await send(write)).status, write.ok, `${write.method} ${write.path} once the lock is free`);
      const afterwards = await state();
      assert.deepEqual(
        [afterwards.teams.includes('Blocked team'), afterwards.firstName, afterwards.subscriptions],
        [true, 'After', before.subscriptions + 1],
      );
      assert.equal(afterwards.refreshTokens.length, 2, 'the refresh spent the token once and stored its successor');
      assert.equal(afterwards.events, before.events + 1, 'the profile change emitted its event once');
    });

    it('a CLI command prints one line, `svc: the database is busy, try again`, exits 1 and writes nothing; --debug adds the stack', async () => {
      const cliEnv = { ...t.env, ...env };
      const argv = ['team', 'create', '--name', 'Blocked by the CLI', '--owner', owner.email];
      const [plain, debug] = await withLockHeld(() =>
        Promise.all([svc(cliEnv, argv), svc(cliEnv, ['--debug', ...argv])]),
      );
      assert.deepEqual(plain, { code: 1, stdout: '', stderr: 'svc: the database is busy, try again\n' });
      assert.equal(debug.code, 1);
      assert.match(debug.stderr, /^svc: the database is busy, try again\n.*database is locked[\s\S]*\n\s+at /);
      assert.equal((await state()).teams.includes('Blocked by the CLI'), false);
      const retried = await svc(cliEnv, argv);
      assert.equal(retried.code, 0, retried.stderr);
      assert.equal((await state()).teams.filter((name) => name === 'Blocked by the CLI').length, 1);
    });
  },
);
