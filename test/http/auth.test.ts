// Personal-access-token authentication as a client sees it: every way a token can be bad is a 401
// problem with `WWW-Authenticate: Bearer …`; a good token without the route's scope is a 403; a PAT
// with no scopes has full access or none depending on SERVICE_PAT_EMPTY_SCOPES_FULL_ACCESS.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { runCli } from '../../src/main.ts';
import { generatePat } from '../../src/tokens/pat-format.ts';
import { createPat, revokePat } from '../../src/tokens/pats.ts';
import { bearer, startApp, type TestApp } from '../support/app.ts';

const silentIo = { out: () => {}, err: () => {} };

function assertUnauthorized(res: LightMyRequestResponse, detail?: string) {
  assert.equal(res.statusCode, 401, res.body);
  assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
  const challenge = String(res.headers['www-authenticate']);
  assert.match(challenge, /^Bearer /);
  assert.match(challenge, /resource_metadata="http:\/\/testserver\/\.well-known\/oauth-protected-resource"/);
  const body = res.json();
  assert.equal(body.status, 401);
  assert.equal(body.title, 'Unauthorized');
  assert.equal(typeof body.detail, 'string');
  assert.ok(body.detail.length > 0);
  assert.equal(body.request_id, res.headers['x-request-id']);
  if (detail) assert.equal(body.detail, detail);
  return challenge;
}

describe('PAT authentication', () => {
  let t: TestApp;
  let user: { id: number; email: string };
  let good: string;
  before(async () => {
    t = await startApp();
    user = await t.user({ firstName: 'Grace' });
    good = await t.token(user.id, ['read:profile']);
  });
  after(() => t.close());

  const me = (headers: Record<string, string> = {}) => t.inject({ url: '/api/v1/me/', headers });

  it('a good token is 200 (the baseline the refusals below differ from)', async () => {
    const res = await me(bearer(good));
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().email, user.email);
  });

  it('no Authorization header → 401 without error="invalid_token"', async () => {
    const challenge = assertUnauthorized(await me(), 'Authentication credentials were not provided.');
    assert.doesNotMatch(challenge, /invalid_token/);
  });

  const malformed: [string, () => string][] = [
    ['lower-case "bearer"', () => `bearer ${good}`],
    ['upper-case "BEARER"', () => `BEARER ${good}`],
    ['two spaces', () => `Bearer  ${good}`],
    ['a tab instead of the space', () => `Bearer\t${good}`],
    ['"Token" scheme', () => `Token ${good}`],
    ['"Basic" scheme', () => `Basic ${Buffer.from(`${user.email}:x`).toString('base64')}`],
    ['double quotes around the token', () => `Bearer "${good}"`],
    ['single quotes around the token', () => `Bearer '${good}'`],
    ['the scheme alone', () => 'Bearer'],
    ['the scheme and a space', () => 'Bearer '],
    ['the token without a scheme', () => good],
    ['two tokens', () => `Bearer ${good} ${good}`],
  ];
  for (const [label, header] of malformed) {
    it(`${label} → 401`, async () => {
      const challenge = assertUnauthorized(await me({ authorization: header() }));
      assert.match(challenge, /error="invalid_token"/);
    });
  }

  it('a bad checksum → 401 (one character of the token changed)', async () => {
    const last = good.at(-1) === 'a' ? 'b' : 'a';
    assertUnauthorized(await me(bearer(good.slice(0, -1) + last)), 'Invalid, expired or revoked token.');
  });

  it('a token one character too long or too short → 401', async () => {
    assertUnauthorized(await me(bearer(good + 'a')));
    assertUnauthorized(await me(bearer(good.slice(0, -1))));
  });

  it('an unknown but well-formed token → 401', async () => {
    assertUnauthorized(await me(bearer(generatePat())), 'Invalid, expired or revoked token.');
  });

  it('a token that is not a PAT at all → 401', async () => {
    assertUnauthorized(await me(bearer('abc.def.ghi')));
  });

  it('an expired token → 401; one expiring in the future works', async () => {
    const db = t.ctx.db.kysely;
    const expired = (
      await createPat(db, {
        userId: user.id,
        name: 'old',
        scopes: ['read:profile'],
        expiresAt: new Date(Date.now() - 1000).toISOString(),
      })
    ).token;
    assertUnauthorized(await me(bearer(expired)), 'Invalid, expired or revoked token.');
    const fresh = (
      await createPat(db, {
        userId: user.id,
        name: 'new',
        scopes: ['read:profile'],
        expiresAt: new Date(Date.now() + 60_000).toISOString(),
      })
    ).token;
    assert.equal((await me(bearer(fresh))).statusCode, 200);
  });

  it('a revoked token → 401 on the next request', async () => {
    const { id, token } = await createPat(t.ctx.db.kysely, {
      userId: user.id,
      name: 'soon revoked',
      scopes: [],
      expiresAt: null,
    });
    assert.equal((await me(bearer(token))).statusCode, 200);
    assert.equal(await revokePat(t.ctx.db.kysely, id), true);
    assertUnauthorized(await me(bearer(token)), 'Invalid, expired or revoked token.');
  });

  it('the token of a user deactivated with `svc user deactivate` → 401; `svc user activate` restores it', async () => {
    const other = await t.user();
    const token = await t.token(other.id, ['read:profile']);
    assert.equal((await me(bearer(token))).statusCode, 200);
    assert.equal(await runCli(['user', 'deactivate', '--email', other.email], t.env, silentIo), 0);
    assertUnauthorized(await me(bearer(token)), 'Invalid, expired or revoked token.');
    assertUnauthorized(await t.inject({ url: '/api/v1/teams/', headers: bearer(token) }));
    assert.equal(await runCli(['user', 'activate', '--email', other.email], t.env, silentIo), 0);
    assert.equal((await me(bearer(token))).statusCode, 200);
  });

  it('a bad token is refused on every protected route, not only /me/', async () => {
    for (const url of [
      '/api/v1/teams/',
      '/api/v1/products/',
      '/api/v1/teams/00000000-0000-0000-0000-000000000000/',
      '/api/v1/teams/00000000-0000-0000-0000-000000000000/members/',
    ]) {
      assertUnauthorized(await t.inject({ url }));
      assertUnauthorized(await t.inject({ url, headers: bearer(generatePat()) }));
    }
  });

  it('a bad token on a public path is ignored there (health, API schema)', async () => {
    assert.equal((await t.inject({ url: '/healthz', headers: { authorization: 'Token nope' } })).statusCode, 200);
    assert.equal((await t.inject({ url: '/api/schema/', headers: { authorization: 'Token nope' } })).statusCode, 200);
  });

  it('last_used_at is written on first use and not again within the minute', async () => {
    const { id, token } = await createPat(t.ctx.db.kysely, {
      userId: user.id,
      name: 'tracked',
      scopes: [],
      expiresAt: null,
    });
    const lastUsed = async () =>
      (
        await t.ctx.db.kysely
          .selectFrom('personal_access_tokens')
          .select('last_used_at')
          .where('id', '=', id)
          .executeTakeFirstOrThrow()
      ).last_used_at;
    assert.equal(await lastUsed(), null);
    const before = Date.now();
    assert.equal((await me(bearer(token))).statusCode, 200);
    // The write is not awaited by the request: it goes out with its batch within about a second.
    let first: string | null = null;
    for (let i = 0; i < 300 && first === null; i++) {
      first = await lastUsed();
      if (first === null) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.ok(first, 'last_used_at was written');
    assert.ok(Date.parse(first) >= before - 1000 && Date.parse(first) <= Date.now());
    for (let i = 0; i < 3; i++) assert.equal((await me(bearer(token))).statusCode, 200);
    // Past the next batch: a use within the minute would have been written by now.
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    assert.equal(await lastUsed(), first);
  });
});

describe('scopes', () => {
  let t: TestApp;
  let userId: number;
  let teamId: string;
  before(async () => {
    t = await startApp();
    userId = (await t.user()).id;
    teamId = (await t.team(userId)).id;
  });
  after(() => t.close());

  const routes = () => [
    ['/api/v1/me/', 'read:profile'],
    ['/api/v1/teams/', 'read:teams'],
    [`/api/v1/teams/${teamId}/`, 'read:teams'],
    [`/api/v1/teams/${teamId}/members/`, 'read:teams'],
    ['/api/v1/products/', 'read:products'],
  ];

  it("a token with the route's scope is 200; with only other scopes it is 403 naming the scope", async () => {
    for (const [url, scope] of routes()) {
      const right = await t.token(userId, [scope]);
      assert.equal((await t.inject({ url, headers: bearer(right) })).statusCode, 200, url);
      const others = ['read:profile', 'read:teams', 'read:products', 'write:profile', 'admin'].filter(
        (s) => s !== scope,
      );
      const wrong = await t.token(userId, others);
      const res = await t.inject({ url, headers: bearer(wrong) });
      assert.equal(res.statusCode, 403, url);
      assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
      const body = res.json();
      assert.equal(body.status, 403);
      assert.equal(body.detail, `This credential lacks the "${scope}" scope.`);
      assert.equal(body.request_id, res.headers['x-request-id']);
    }
  });

  it('a PAT with an empty scope list has full access by default', async () => {
    const token = await t.token(userId, []);
    for (const [url] of routes()) assert.equal((await t.inject({ url, headers: bearer(token) })).statusCode, 200, url);
  });

  it('with SERVICE_PAT_EMPTY_SCOPES_FULL_ACCESS=false a PAT with an empty scope list has no access (403)', async () => {
    const strict = await startApp({ SERVICE_PAT_EMPTY_SCOPES_FULL_ACCESS: 'false' });
    try {
      const owner = await strict.user();
      const team = await strict.team(owner.id);
      const empty = await strict.token(owner.id, []);
      const scoped = await strict.token(owner.id, ['read:teams']);
      for (const url of [
        '/api/v1/me/',
        '/api/v1/teams/',
        `/api/v1/teams/${team.id}/`,
        `/api/v1/teams/${team.id}/members/`,
        '/api/v1/products/',
      ]) {
        const res = await strict.inject({ url, headers: bearer(empty) });
        assert.equal(res.statusCode, 403, url);
        assert.match(res.json().detail, /^This credential lacks the "[a-z:]+" scope\.$/);
      }
      // Scoped tokens are unaffected by the setting.
      assert.equal((await strict.inject({ url: '/api/v1/teams/', headers: bearer(scoped) })).statusCode, 200);
    } finally {
      await strict.close();
    }
  });

  it('a custom scope from SERVICE_EXTRA_SCOPES can be granted to a PAT by the CLI', async () => {
    const custom = await startApp({ SERVICE_EXTRA_SCOPES: 'read:reports, write:reports' });
    try {
      const owner = await custom.user();
      const lines: string[] = [];
      const code = await runCli(
        ['token', 'create', '--email', owner.email, '--name', 'reports', '--scopes', 'read:reports read:profile'],
        custom.env,
        {
          out: (line) => lines.push(line),
          err: () => {},
        },
      );
      assert.equal(code, 0);
      assert.equal((await custom.inject({ url: '/api/v1/me/', headers: bearer(lines[0]) })).statusCode, 200);
      assert.equal((await custom.inject({ url: '/api/v1/teams/', headers: bearer(lines[0]) })).statusCode, 403);
    } finally {
      await custom.close();
    }
  });
});
