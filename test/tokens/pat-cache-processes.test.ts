// The PAT resolver's cache against writes made by other processes: a token revoked or a user
// deactivated by `svc …` is refused on the next request (SQLite: data_version moved; PostgreSQL: the
// command published the write with NOTIFY before exiting). A file of its own because it starts
// processes: `npm run test:fast` leaves it out (the in-process cases are in pat-cache.test.ts).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bearer, startApp, type TestApp } from '../support/app.ts';
import { svc } from '../cli/cli-helpers.ts';

describe('PAT resolver cache and other processes', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp();
  });
  after(() => t.close());
  const me = (token: string) => t.inject({ url: '/api/v1/me/', headers: bearer(token) });

  it('a token revoked by another process (svc token revoke) is refused on the next request', async () => {
    const user = await t.user();
    const token = await t.token(user.id, ['read:profile']);
    const row = await t.ctx.db.kysely
      .selectFrom('personal_access_tokens')
      .select('id')
      .where('user_id', '=', user.id)
      .executeTakeFirstOrThrow();
    assert.equal((await me(token)).statusCode, 200);
    const revoked = await svc(t.env, ['token', 'revoke', '--id', String(row.id)]);
    assert.equal(revoked.code, 0, revoked.stderr);
    // SQLite: data_version moved. PostgreSQL: the command published the write (NOTIFY) before exiting.
    assert.equal((await me(token)).statusCode, 401);
  });

  it('a user deactivated by another process is refused on the next request, and works again once activated', async () => {
    const user = await t.user();
    const token = await t.token(user.id, ['read:profile']);
    assert.equal((await me(token)).statusCode, 200);
    const off = await svc(t.env, ['user', 'deactivate', '--email', user.email]);
    assert.equal(off.code, 0, off.stderr);
    assert.equal((await me(token)).statusCode, 401);
    const on = await svc(t.env, ['user', 'activate', '--email', user.email]);
    assert.equal(on.code, 0, on.stderr);
    assert.equal((await me(token)).statusCode, 200);
  });
});
