import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeProtectedHeader } from 'jose';
import { cli } from '../cli/cli-helpers.ts';
import { bearer, startApp, TEST_PASSWORD, type TestApp } from '../support/app.ts';

describe('svc jwt rotate-key', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp();
  });
  after(() => t.close());

  it('prints the new kid; new tokens use it once the server re-checks, old ones keep working', async () => {
    const user = await t.user();
    const issue = () =>
      t.inject({ method: 'POST', url: '/api/auth/token/', payload: { email: user.email, password: TEST_PASSWORD } });
    const old = (await issue()).json().access;
    const result = await cli(t.env, ['jwt', 'rotate-key']);
    assert.equal(result.code, 0, result.stderr);
    const kid = result.stdout.trim();
    assert.match(kid, /^[A-Za-z0-9_-]{16}$/);
    const jwks = (await t.inject({ url: '/.well-known/jwks.json' })).json();
    assert.ok(
      jwks.keys.some((key: { kid: string }) => key.kid === kid),
      'the new key is published at once',
    );
    assert.equal((await t.inject({ url: '/api/v1/me/', headers: bearer(old) })).statusCode, 200);
    const row = await t.ctx.db.kysely
      .selectFrom('jwt_keys')
      .selectAll()
      .where('kid', '=', decodeProtectedHeader(old).kid!)
      .executeTakeFirstOrThrow();
    assert.ok(row.retire_at && Date.parse(row.retire_at) > Date.now(), 'the old key retires later, not now');
  });
});
