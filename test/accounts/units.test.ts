import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fs from 'node:fs';
import { isCommonPassword, passwordProblem } from '../../src/accounts/password-policy.ts';
import { hashPassword, verifyPassword } from '../../src/accounts/passwords.ts';
import { safeNextPath } from '../../src/accounts/session-auth.ts';
import { purgeAccountRows } from '../../src/accounts/housekeeping.ts';
import { checkThrottle, recordFailure } from '../../src/accounts/auth-throttle.ts';
import { startApp, TEST_PASSWORD, type TestApp } from '../support/app.ts';
import { PageClient } from './page-client.ts';

describe('password policy', () => {
  it('ships a list of a few thousand common passwords', () => {
    for (const common of ['qwertyuiop', '1234567890', 'password123', 'Basketball', 'baseball2024!', 'manchester1'])
      assert.ok(isCommonPassword(common), common);
    for (const fine of ['correct horse battery staple', 'violet submarine orchestra 42'])
      assert.ok(!isCommonPassword(fine), fine);
  });
  it('names the problem', () => {
    assert.match(passwordProblem('short')!, /at least 10/);
    assert.match(passwordProblem('x'.repeat(1001))!, /at most 1000/);
    assert.match(passwordProblem('Ada.Lovelace@example.com', 'ada.lovelace@example.com')!, /e-mail/);
    assert.match(passwordProblem('qwertyuiop')!, /too common/);
    assert.equal(passwordProblem('correct horse battery staple', 'a@example.com'), null);
  });
});

describe('password hashing', () => {
  it('argon2id PHC strings that verify the right password only, with more hashes at once than hashing threads', async () => {
    const passwords = Array.from({ length: 10 }, (_, i) => `a long password number ${i}`);
    const hashes = await Promise.all(passwords.map((p) => hashPassword(p)));
    for (const hash of hashes)
      assert.match(hash, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
    assert.equal(new Set(hashes).size, hashes.length, 'a fresh salt each time');
    const checks = await Promise.all(
      passwords.map((p, i) =>
        Promise.all([verifyPassword(p, hashes[i]), verifyPassword(p, hashes[(i + 1) % hashes.length])]),
      ),
    );
    assert.deepEqual(
      checks,
      passwords.map(() => [true, false]),
    );
  });

  it(
    'hashes on threads of lower CPU priority than the event loop (Linux)',
    { skip: process.platform !== 'linux' },
    async () => {
      await hashPassword('a long password to start a thread');
      const niceOf = (tid: string) =>
        Number(fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1].split(' ')[16]);
      const nices = fs.readdirSync('/proc/self/task').map(niceOf);
      assert.equal(niceOf(String(process.pid)), 0, 'the main thread keeps its priority');
      assert.ok(nices.includes(10), `a thread at nice 10 among ${JSON.stringify(nices)}`);
    },
  );
});

describe('safeNextPath', () => {
  for (const [input, expected] of [
    ['/accounts/tokens/', '/accounts/tokens/'],
    ['/o/authorize/?client_id=x&scope=a%20b', '/o/authorize/?client_id=x&scope=a%20b'],
    ['https://evil.example/', '/accounts/profile/'],
    ['//evil.example', '/accounts/profile/'],
    ['/\\evil.example', '/accounts/profile/'],
    ['/ok\\..', '/accounts/profile/'],
    ['/a\nb', '/accounts/profile/'],
    ['javascript:alert(1)', '/accounts/profile/'],
    ['', '/accounts/profile/'],
    [undefined, '/accounts/profile/'],
    [['/a', '/b'], '/accounts/profile/'],
  ] as const) {
    it(`${JSON.stringify(input)} → ${expected}`, () => assert.equal(safeNextPath(input), expected));
  }
});

describe('failure throttle and housekeeping', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp();
  });
  after(() => t.close());

  it('locks after 5 failures of a pair, other pairs stay open, 20 lock the account from anywhere', async () => {
    for (let i = 0; i < 5; i++) await recordFailure(t.ctx, 'login', 'a@example.com', '10.0.0.1');
    assert.equal((await checkThrottle(t.ctx, 'login', 'A@example.com', '10.0.0.1')).locked, true);
    assert.equal((await checkThrottle(t.ctx, 'login', 'a@example.com', '10.0.0.2')).locked, false);
    assert.equal((await checkThrottle(t.ctx, 'login', 'b@example.com', '10.0.0.1')).locked, false);
    // Re-auth and TOTP guess the same secrets: they share the counters.
    assert.equal((await checkThrottle(t.ctx, 'reauth', 'a@example.com', '10.0.0.1')).locked, true);
    // Password-reset requests have their own.
    assert.equal((await checkThrottle(t.ctx, 'reset', 'a@example.com', '10.0.0.1')).locked, false);
    for (let i = 0; i < 15; i++) await recordFailure(t.ctx, 'login', 'a@example.com', `10.0.1.${i}`);
    assert.equal((await checkThrottle(t.ctx, 'login', 'a@example.com', '10.9.9.9')).locked, true);
  });

  it('purges expired sessions and spent keys, keeps live ones', async () => {
    const user = await t.user();
    const c = new PageClient(t);
    await c.login(user.email, TEST_PASSWORD);
    const old = {
      id: 'x'.repeat(64),
      user_id: user.id,
      stage: 'full' as const,
      created_at: '2000-01-01T00:00:00.000Z',
      last_seen_at: '2000-01-01T00:00:00.000Z',
      expires_at: '2000-01-02T00:00:00.000Z',
      reauth_at: null,
    };
    await t.ctx.db.kysely.insertInto('sessions').values(old).execute();
    await purgeAccountRows(t.ctx);
    const left = await t.ctx.db.kysely.selectFrom('sessions').select('id').where('user_id', '=', user.id).execute();
    assert.equal(left.length, 1);
    assert.notEqual(left[0].id, old.id);
    assert.equal((await c.get('/accounts/profile/')).statusCode, 200);
  });
});
