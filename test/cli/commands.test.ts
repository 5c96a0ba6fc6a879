// Every `svc` command in-process (runCli, the code path of the real binary): what it prints, what it
// writes, and its exits — 2 for bad arguments (message on stderr, nothing written), 1 for other
// failures. test/cli/process.test.ts runs a representative set as real subprocesses.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bearer, startApp, type TestApp } from '../support/app.ts';
import { cli, snapshot, type CliResult } from './cli-helpers.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const PAT = /^svc_[0-9A-Za-z]{36}$/;

describe('svc CLI', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp();
  });
  after(() => t.close());

  const run = (...argv: string[]) => cli(t.env, argv);

  /** A refused command: the exit code, a message on stderr, nothing on stdout, no row changed. */
  async function refused(code: 1 | 2, argv: string[], message: RegExp): Promise<CliResult> {
    const before = await snapshot(t);
    const result = await run(...argv);
    assert.equal(result.code, code, `svc ${argv.join(' ')} → ${result.code}; stderr: ${result.stderr}`);
    assert.match(result.stderr, message);
    assert.equal(result.stdout, '', 'nothing on stdout');
    assert.equal(await snapshot(t), before, 'nothing written');
    return result;
  }

  async function userRow(email: string) {
    return t.ctx.db.kysely.selectFrom('users').selectAll().where('email', '=', email.toLowerCase()).executeTakeFirst();
  }

  describe('general', () => {
    it('no command prints the usage of every command and exits 2', async () => {
      const result = await run();
      assert.equal(result.code, 2);
      for (const command of [
        'svc serve',
        'svc migrate',
        'svc user create',
        'svc user deactivate',
        'svc user activate',
        'svc team create',
        'svc team add-member',
        'svc team deactivate',
        'svc team activate',
        'svc token create',
        'svc token list',
        'svc token revoke',
      ]) {
        assert.ok(result.stderr.includes(command), `usage lists ${command}`);
      }
    });

    it('an unknown command exits 2', async () => {
      await refused(2, ['frobnicate'], /^svc: unknown command "frobnicate"\nUsage: svc <command>/);
      await refused(2, ['user', 'delete', '--email', 'x@example.com'], /^svc: unknown command "user delete"\nUsage: /);
    });

    it("unknown options and stray positional arguments exit 2 with the command's usage", async () => {
      await refused(
        2,
        ['user', 'create', '--email', 'a@example.com', '--password', 'long enough pw', '--admin'],
        /^svc: unknown option '--admin'\nUsage: svc user create/,
      );
      await refused(
        2,
        ['user', 'create', 'a@example.com'],
        /^svc: unexpected argument 'a@example.com'\nUsage: svc user create/,
      );
      await refused(2, ['token', 'list', '--email'], /--email/);
    });

    it('a bad setting exits 1 naming the variable, before touching anything', async () => {
      const result = await cli({ ...t.env, PORT: 'eighty' }, ['migrate']);
      assert.equal(result.code, 1);
      assert.match(result.stderr, /PORT/);
    });

    it('svc migrate reports the schema up to date', async () => {
      const result = await run('migrate');
      assert.deepEqual(result, { code: 0, stdout: 'migrations are up to date\n', stderr: '' });
    });
  });

  describe('svc user create', () => {
    it("prints the new user's id and stores the user (e-mail lower-cased, names, flags)", async () => {
      const result = await run(
        'user',
        'create',
        '--email',
        'Ada@Example.com',
        '--password',
        'a long password',
        '--first-name',
        'Ada',
        '--last-name',
        'Lovelace',
        '--display-name',
        'ada',
        '--verified',
        '--staff',
      );
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /^\d+\n$/);
      const row = await userRow('ada@example.com');
      assert.ok(row);
      assert.equal(row.id, Number(result.stdout));
      assert.equal(row.email, 'ada@example.com');
      assert.deepEqual([row.first_name, row.last_name, row.display_name], ['Ada', 'Lovelace', 'ada']);
      assert.ok(row.email_verified_at);
      assert.equal(row.is_staff, 1);
      assert.equal(row.is_active, 1);
      assert.match(row.password_hash, /^\$argon2id\$/);
      assert.ok(!row.password_hash.includes('a long password'));
    });

    it('without the optional flags: empty names, unverified, not staff', async () => {
      const result = await run('user', 'create', '--email', 'plain@example.com', '--password', 'a long password');
      assert.equal(result.code, 0, result.stderr);
      const row = await userRow('plain@example.com');
      assert.deepEqual(
        [row!.first_name, row!.last_name, row!.display_name, row!.email_verified_at, row!.is_staff],
        ['', '', '', null, 0],
      );
    });

    it('an existing e-mail (in any case) exits 1 with a message', async () => {
      await refused(
        1,
        ['user', 'create', '--email', 'ADA@example.com', '--password', 'another long one'],
        /already exists/,
      );
    });

    it('bad arguments exit 2', async () => {
      await refused(2, ['user', 'create', '--password', 'a long password'], /--email is required/);
      await refused(2, ['user', 'create', '--email', 'new@example.com'], /--password is required/);
      await refused(
        2,
        ['user', 'create', '--email', 'not-an-email', '--password', 'a long password'],
        /not a valid e-mail/,
      );
      await refused(2, ['user', 'create', '--email', '', '--password', 'a long password'], /--email is required/);
      await refused(
        2,
        ['user', 'create', '--email', 'new@example.com', '--password', 'short'],
        /--password must be at least/,
      );
      await refused(
        2,
        ['user', 'create', '--email', 'new@example.com', '--password', 'a long password', '--verified=yes'],
        /verified/,
      );
    });
  });

  describe('svc user deactivate / activate', () => {
    it("switches the user's active flag, and the user's tokens with it", async () => {
      const user = await t.user();
      const token = await t.token(user.id, ['read:profile']);
      const off = await run('user', 'deactivate', '--email', user.email.toUpperCase());
      assert.deepEqual([off.code, off.stderr], [0, '']);
      assert.equal(off.stdout, `${user.email} deactivated\n`);
      assert.equal((await userRow(user.email))!.is_active, 0);
      assert.equal((await t.inject({ url: '/api/v1/me/', headers: bearer(token) })).statusCode, 401);
      const on = await run('user', 'activate', '--email', user.email);
      assert.equal(on.code, 0);
      assert.equal(on.stdout, `${user.email} activated\n`);
      assert.equal((await userRow(user.email))!.is_active, 1);
      assert.equal((await t.inject({ url: '/api/v1/me/', headers: bearer(token) })).statusCode, 200);
    });

    it('an unknown user exits 1; bad arguments exit 2', async () => {
      await refused(
        1,
        ['user', 'deactivate', '--email', 'nobody@example.com'],
        /^svc: no user with e-mail nobody@example.com\n$/,
      );
      await refused(
        1,
        ['user', 'activate', '--email', 'nobody@example.com'],
        /^svc: no user with e-mail nobody@example.com\n$/,
      );
      await refused(2, ['user', 'deactivate'], /--email is required/);
      await refused(2, ['user', 'activate', '--email', 'nope'], /not a valid e-mail/);
    });
  });

  describe('svc team create / add-member / deactivate / activate', () => {
    let owner: { id: number; email: string };
    let other: { id: number; email: string };
    before(async () => {
      owner = await t.user();
      other = await t.user();
    });

    it('team create prints the UUID; the owner is its owner; the slug is derived from the name', async () => {
      const result = await run('team', 'create', '--name', 'Rocket Science Ltd.', '--owner', owner.email);
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /^[0-9a-f-]{36}\n$/);
      const id = result.stdout.trim();
      assert.match(id, UUID);
      const team = await t.ctx.db.kysely.selectFrom('teams').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      assert.deepEqual([team.name, team.slug, team.is_active], ['Rocket Science Ltd.', 'rocket-science-ltd', 1]);
      const members = await t.ctx.db.kysely
        .selectFrom('memberships')
        .select(['user_id', 'role'])
        .where('team_id', '=', id)
        .execute();
      assert.deepEqual(
        members.map((m) => [m.user_id, m.role]),
        [[owner.id, 'owner']],
      );
    });

    it('team create with --slug uses it; the same name again gets a free slug', async () => {
      const explicit = await run('team', 'create', '--name', 'Zeta', '--slug', 'zeta-corp', '--owner', owner.email);
      assert.equal(explicit.code, 0, explicit.stderr);
      const again = await run('team', 'create', '--name', 'Rocket Science Ltd.', '--owner', owner.email);
      assert.equal(again.code, 0);
      const slugs = await t.ctx.db.kysely
        .selectFrom('teams')
        .select('slug')
        .where('id', 'in', [explicit.stdout.trim(), again.stdout.trim()])
        .orderBy('slug')
        .execute();
      assert.deepEqual(
        slugs.map((s) => s.slug),
        ['rocket-science-ltd-2', 'zeta-corp'],
      );
    });

    it('team create failures exit 1 (taken slug, unknown owner) and bad arguments exit 2', async () => {
      await refused(
        1,
        ['team', 'create', '--name', 'Other', '--slug', 'zeta-corp', '--owner', owner.email],
        /already taken/,
      );
      await refused(
        1,
        ['team', 'create', '--name', 'Other', '--owner', 'nobody@example.com'],
        /^svc: no user with e-mail nobody@example.com\n$/,
      );
      await refused(2, ['team', 'create', '--owner', owner.email], /--name is required/);
      await refused(2, ['team', 'create', '--name', 'X'], /--owner is required/);
      await refused(2, ['team', 'create', '--name', 'X', '--slug', 'Bad Slug', '--owner', owner.email], /--slug/);
      await refused(2, ['team', 'create', '--name', 'X', '--slug', '-x', '--owner', owner.email], /--slug/);
      await refused(2, ['team', 'create', '--name', 'x'.repeat(101), '--owner', owner.email], /--name/);
    });

    it('team add-member adds by id or slug with the given role', async () => {
      const added = await run('team', 'add-member', '--team', 'zeta-corp', '--email', other.email, '--role', 'admin');
      assert.equal(added.code, 0, added.stderr);
      assert.equal(added.stderr, '');
      const zeta = await t.ctx.db.kysely
        .selectFrom('teams')
        .select('id')
        .where('slug', '=', 'zeta-corp')
        .executeTakeFirstOrThrow();
      const third = await t.user();
      const byId = await run(
        'team',
        'add-member',
        '--team',
        zeta.id.toUpperCase(),
        '--email',
        third.email,
        '--role',
        'member',
      );
      assert.equal(byId.code, 0, byId.stderr);
      const members = await t.ctx.db.kysely
        .selectFrom('memberships')
        .select(['user_id', 'role'])
        .where('team_id', '=', zeta.id)
        .orderBy('id')
        .execute();
      assert.deepEqual(
        members.map((m) => [m.user_id, m.role]),
        [
          [owner.id, 'owner'],
          [other.id, 'admin'],
          [third.id, 'member'],
        ],
      );
      const token = await t.token(other.id, ['read:teams']);
      const res = await t.inject({ url: `/api/v1/teams/${zeta.id}/`, headers: bearer(token) });
      assert.equal(res.json().role, 'admin');
    });

    it('team add-member failures exit 1 and bad arguments exit 2', async () => {
      await refused(
        1,
        ['team', 'add-member', '--team', 'zeta-corp', '--email', other.email, '--role', 'member'],
        /already a member/,
      );
      await refused(
        1,
        ['team', 'add-member', '--team', 'no-such-team', '--email', other.email, '--role', 'member'],
        /^svc: no team with id or slug "[^"]+"\n$/,
      );
      await refused(
        1,
        [
          'team',
          'add-member',
          '--team',
          '00000000-0000-0000-0000-000000000000',
          '--email',
          other.email,
          '--role',
          'member',
        ],
        /^svc: no team with id or slug "[^"]+"\n$/,
      );
      await refused(
        1,
        ['team', 'add-member', '--team', 'zeta-corp', '--email', 'nobody@example.com', '--role', 'member'],
        /^svc: no user with e-mail nobody@example.com\n$/,
      );
      await refused(
        2,
        ['team', 'add-member', '--team', 'zeta-corp', '--email', other.email, '--role', 'superuser'],
        /--role must be owner, admin or member/,
      );
      await refused(2, ['team', 'add-member', '--team', 'zeta-corp', '--email', other.email], /--role is required/);
      await refused(2, ['team', 'add-member', '--email', other.email, '--role', 'member'], /--team is required/);
      await refused(2, ['team', 'add-member', '--team', 'zeta-corp', '--role', 'member'], /--email is required/);
    });

    it('team deactivate / activate switch the flag by slug or id; unknown team exits 1, missing --team exits 2', async () => {
      const zeta = await t.ctx.db.kysely
        .selectFrom('teams')
        .select('id')
        .where('slug', '=', 'zeta-corp')
        .executeTakeFirstOrThrow();
      const active = async () =>
        (
          await t.ctx.db.kysely
            .selectFrom('teams')
            .select('is_active')
            .where('id', '=', zeta.id)
            .executeTakeFirstOrThrow()
        ).is_active;
      const off = await run('team', 'deactivate', '--team', 'zeta-corp');
      assert.equal(off.code, 0, off.stderr);
      assert.equal(await active(), 0);
      const on = await run('team', 'activate', '--team', zeta.id);
      assert.equal(on.code, 0, on.stderr);
      assert.equal(await active(), 1);
      await refused(1, ['team', 'deactivate', '--team', 'nope'], /^svc: no team with id or slug "[^"]+"\n$/);
      await refused(1, ['team', 'activate', '--team', 'nope'], /^svc: no team with id or slug "[^"]+"\n$/);
      await refused(2, ['team', 'deactivate'], /--team is required/);
      await refused(2, ['team', 'activate'], /--team is required/);
    });
  });

  describe('svc token create / list / revoke', () => {
    let user: { id: number; email: string };
    before(async () => {
      user = await t.user();
    });

    it('token create prints the raw token alone on one line, and the token works', async () => {
      const result = await run(
        'token',
        'create',
        '--email',
        user.email,
        '--name',
        'laptop',
        '--scopes',
        'read:profile read:teams',
      );
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stderr, '');
      assert.match(result.stdout, /^svc_[0-9A-Za-z]{36}\n$/);
      const token = result.stdout.trim();
      assert.match(token, PAT);
      const me = await t.inject({ url: '/api/v1/me/', headers: bearer(token) });
      assert.equal(me.statusCode, 200);
      assert.equal(me.json().id, user.id);
      assert.equal((await t.inject({ url: '/api/v1/products/', headers: bearer(token) })).statusCode, 403);
      const row = await t.ctx.db.kysely
        .selectFrom('personal_access_tokens')
        .selectAll()
        .where('token_prefix', '=', token.slice(0, 12))
        .executeTakeFirstOrThrow();
      assert.deepEqual(JSON.parse(row.scopes), ['read:profile', 'read:teams']);
      assert.equal(row.name, 'laptop');
      assert.equal(row.expires_at, null);
    });

    it('--scopes accepts commas; no --scopes means an empty list (full access by default)', async () => {
      const commas = await run(
        'token',
        'create',
        '--email',
        user.email,
        '--name',
        'ci',
        '--scopes',
        'read:teams,read:products',
      );
      assert.equal(commas.code, 0);
      const empty = await run('token', 'create', '--email', user.email, '--name', 'all');
      assert.equal(empty.code, 0);
      const rows = await t.ctx.db.kysely
        .selectFrom('personal_access_tokens')
        .select(['name', 'scopes'])
        .where('user_id', '=', user.id)
        .where('name', 'in', ['ci', 'all'])
        .orderBy('name')
        .execute();
      assert.deepEqual(
        rows.map((r) => [r.name, JSON.parse(r.scopes)]),
        [
          ['all', []],
          ['ci', ['read:teams', 'read:products']],
        ],
      );
      assert.equal(
        (await t.inject({ url: '/api/v1/products/', headers: bearer(empty.stdout.trim()) })).statusCode,
        200,
      );
    });

    it('--expires-at with a date means through that UTC day; with an ISO time, that moment', async () => {
      const date = await run('token', 'create', '--email', user.email, '--name', 'dated', '--expires-at', '2099-01-31');
      assert.equal(date.code, 0, date.stderr);
      const time = await run(
        'token',
        'create',
        '--email',
        user.email,
        '--name',
        'timed',
        '--expires-at',
        '2099-06-01T12:30:00+02:00',
      );
      assert.equal(time.code, 0, time.stderr);
      const rows = await t.ctx.db.kysely
        .selectFrom('personal_access_tokens')
        .select(['name', 'expires_at'])
        .where('name', 'in', ['dated', 'timed'])
        .orderBy('name')
        .execute();
      assert.deepEqual(
        rows.map((r) => [r.name, r.expires_at]),
        [
          ['dated', '2099-02-01T00:00:00.000Z'],
          ['timed', '2099-06-01T10:30:00.000Z'],
        ],
      );
      assert.equal((await t.inject({ url: '/api/v1/me/', headers: bearer(date.stdout.trim()) })).statusCode, 200);
    });

    it('bad arguments exit 2 (past or malformed expiry, unknown scope, missing name or e-mail)', async () => {
      await refused(
        2,
        ['token', 'create', '--email', user.email, '--name', 'x', '--expires-at', '2020-01-01'],
        /--expires-at "2020-01-01" is in the past/,
      );
      await refused(
        2,
        [
          'token',
          'create',
          '--email',
          user.email,
          '--name',
          'x',
          '--expires-at',
          new Date(Date.now() - 60_000).toISOString(),
        ],
        /in the past/,
      );
      await refused(
        2,
        ['token', 'create', '--email', user.email, '--name', 'x', '--expires-at', 'tomorrow'],
        /not a date/,
      );
      await refused(
        2,
        ['token', 'create', '--email', user.email, '--name', 'x', '--expires-at', '2099-02-30'],
        /not a date/,
      );
      await refused(
        2,
        ['token', 'create', '--email', user.email, '--name', 'x', '--expires-at', '2099-01-01T10:00:00'],
        /not a date/,
      );
      await refused(
        2,
        ['token', 'create', '--email', user.email, '--name', 'x', '--scopes', 'read:profile read:everything'],
        /unknown scope\(s\): read:everything/,
      );
      await refused(2, ['token', 'create', '--email', user.email], /--name is required/);
      await refused(2, ['token', 'create', '--email', user.email, '--name', '   '], /--name is required/);
      await refused(2, ['token', 'create', '--email', user.email, '--name', 'x'.repeat(101)], /--name/);
      await refused(2, ['token', 'create', '--name', 'x'], /--email is required/);
    });

    it('an unknown user exits 1', async () => {
      await refused(
        1,
        ['token', 'create', '--email', 'nobody@example.com', '--name', 'x'],
        /^svc: no user with e-mail nobody@example.com\n$/,
      );
      await refused(
        1,
        ['token', 'list', '--email', 'nobody@example.com'],
        /^svc: no user with e-mail nobody@example.com\n$/,
      );
    });

    it('token list --json prints an array of objects, id first, newest first, never the raw token or hash', async () => {
      const fresh = await t.user();
      const a = (
        await run('token', 'create', '--email', fresh.email, '--name', 'first', '--scopes', 'read:profile')
      ).stdout.trim();
      const b = (
        await run('token', 'create', '--email', fresh.email, '--name', 'second', '--expires-at', '2099-01-31')
      ).stdout.trim();
      const result = await run('token', 'list', '--email', fresh.email, '--json');
      assert.equal(result.code, 0, result.stderr);
      const rows = JSON.parse(result.stdout);
      assert.ok(Array.isArray(rows));
      assert.equal(rows.length, 2);
      for (const row of rows) {
        assert.equal(Object.keys(row)[0], 'id');
        assert.equal(typeof row.id, 'number');
        assert.deepEqual(Object.keys(row), [
          'id',
          'name',
          'prefix',
          'scopes',
          'created_at',
          'last_used_at',
          'expires_at',
          'revoked_at',
        ]);
      }
      assert.deepEqual(
        rows.map((r: { name: string }) => r.name),
        ['second', 'first'],
      );
      assert.equal(rows[0].prefix, b.slice(0, 12));
      assert.deepEqual(rows[1].scopes, ['read:profile']);
      assert.equal(rows[0].expires_at, '2099-02-01T00:00:00.000Z');
      assert.ok(!result.stdout.includes(a) && !result.stdout.includes(b), 'raw tokens are never listed');
      assert.doesNotMatch(result.stdout, /[0-9a-f]{64}/, 'nor their hashes');
    });

    it('token list without --json prints a table with a header row', async () => {
      const fresh = await t.user();
      await run(
        'token',
        'create',
        '--email',
        fresh.email,
        '--name',
        'deploy-bot',
        '--scopes',
        'read:teams read:products',
      );
      const result = await run('token', 'list', '--email', fresh.email);
      assert.equal(result.code, 0);
      const lines = result.stdout.trimEnd().split('\n');
      assert.equal(lines.length, 2);
      assert.match(lines[0], /^ID\s+NAME\s+PREFIX\s+SCOPES\s+CREATED_AT\s+LAST_USED_AT\s+EXPIRES_AT\s+REVOKED_AT$/);
      assert.match(lines[1], /^\d+\s+deploy-bot\s+svc_\w{8}\s+read:teams read:products\s+\d{4}-/);
      const none = await t.user();
      assert.equal((await run('token', 'list', '--email', none.email)).stdout, '(none)\n');
      assert.equal((await run('token', 'list', '--email', none.email, '--json')).stdout, '[]\n');
    });

    it('token revoke stops the token at once; revoking again exits 1; a bad id exits 2', async () => {
      const fresh = await t.user();
      const token = (await run('token', 'create', '--email', fresh.email, '--name', 'to revoke')).stdout.trim();
      const [{ id }] = JSON.parse((await run('token', 'list', '--email', fresh.email, '--json')).stdout);
      assert.equal((await t.inject({ url: '/api/v1/me/', headers: bearer(token) })).statusCode, 200);
      const result = await run('token', 'revoke', '--id', String(id));
      assert.deepEqual(result, { code: 0, stdout: `token ${id} revoked\n`, stderr: '' });
      assert.equal((await t.inject({ url: '/api/v1/me/', headers: bearer(token) })).statusCode, 401);
      const listed = JSON.parse((await run('token', 'list', '--email', fresh.email, '--json')).stdout);
      assert.ok(listed[0].revoked_at);
      await refused(1, ['token', 'revoke', '--id', String(id)], /^svc: no active token with id \d+\n$/);
      await refused(1, ['token', 'revoke', '--id', '999999'], /^svc: no active token with id \d+\n$/);
      await refused(2, ['token', 'revoke', '--id', 'abc'], /--id must be a token id/);
      await refused(2, ['token', 'revoke', '--id', '-1'], /--id/);
      await refused(2, ['token', 'revoke'], /--id is required/);
    });
  });
});
