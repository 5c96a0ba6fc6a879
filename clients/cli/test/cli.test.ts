// svc-cli end to end, as real processes against the real service on a real socket: `login` by the
// device flow approved in headless Chromium (the browser opened through xdg-open), the config file's
// modes, whoami, teams, invitations (the e-mail is written), webhooks (the secret shown once), api,
// --json, SVC_TOKEN over the file, refresh after the access token expires (an 8-second lifetime),
// a failed refresh, tables and colour on a terminal, each exit code, a denied login, and logout
// (the old token answers 401).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import type { Browser } from 'playwright-core';
import { sendQueuedMail } from '../../../src/mail/outbox.ts';
import { readMailbox } from '../../../test/mail/eml.ts';
import { get, launchBrowser, logIn, postForm, startOAuthApp, type OAuthTestApp } from '../../../test/oauth/helpers.ts';
import { VERSION } from '../src/version.ts';
import { BIN, CLI_ROOT, cli, fakeOpener, finished, spawnCli, stderrMatch, tempHome } from './helpers.ts';

const ACCESS_TTL = 8;

describe('svc-cli', () => {
  let t: OAuthTestApp;
  let browser: Browser;
  let user: { id: number; email: string };
  const home = tempHome();
  const env = () => home.env;
  const hostsFile = () => path.join(home.config, 'svc', 'hosts.json');
  const stored = () => JSON.parse(fs.readFileSync(hostsFile(), 'utf8')).profiles.default;

  before(async () => {
    t = await startOAuthApp({
      SERVICE_WEBHOOKS_ENABLED: 'true',
      SERVICE_WEBHOOKS_ALLOWED_CIDRS: '127.0.0.1/32',
      SERVICE_OAUTH_ACCESS_TTL_SECONDS: String(ACCESS_TTL),
    });
    browser = await launchBrowser();
    user = await t.user({ firstName: 'Cli' });
  });
  after(async () => {
    await browser?.close();
    await t?.close();
    home.remove();
  });

  /** Logs in to the device page and types `userCode`; clicks Approve or Deny. */
  async function answerInBrowser(verificationUri: string, userCode: string, choice: 'approve' | 'deny') {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(verificationUri);
      await logIn(page, user.email);
      await page.fill('#user_code', userCode);
      await Promise.all([page.waitForLoadState('load'), page.click('#continue')]);
      assert.equal(await page.locator('.client-name').textContent(), 'svc-cli');
      await page.click(`#${choice}`);
      // The answer page, before the browser goes away (a closed page could cancel the form's POST).
      await page
        .locator('main', { hasText: choice === 'approve' ? /svc-cli is connected/ : /not connected/ })
        .waitFor();
    } finally {
      await context.close();
    }
  }

  it('package versions match', () => {
    assert.equal(VERSION, JSON.parse(fs.readFileSync(path.join(CLI_ROOT, 'package.json'), 'utf8')).version);
  });

  it('login: the device flow, approved in the browser it opened; hosts.json 0600 in a 0700 directory', async () => {
    const opener = fakeOpener(home.home);
    const child = spawnCli(['login', '--url', t.base], {
      ...env(),
      DISPLAY: ':99',
      PATH: `${opener.bin}:${process.env.PATH}`,
    });
    // A browser login (argon2 password check included) can take a while on a busy machine.
    const done = finished(child, 100_000);
    // The address and the code, each alone on its line of stderr.
    const [, uri, code] = await stderrMatch(child, /^(http:\/\/\S+\/o\/device\/)\n.*\n([B-Z]{4}-[B-Z]{4})\n/m);
    assert.equal(uri, `${t.base}/o/device/`);
    await answerInBrowser(uri, code, 'approve');
    const result = await done;
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, new RegExp(`Logged in to ${t.base} as ${user.email}\\.`));
    assert.equal(result.stdout, '');
    assert.deepEqual(opener.opened(), [`${t.base}/o/device/?user_code=${encodeURIComponent(code)}`]);

    assert.equal(fs.statSync(path.dirname(hostsFile())).mode & 0o777, 0o700);
    assert.equal(fs.statSync(hostsFile()).mode & 0o777, 0o600);
    const profile = stored();
    assert.equal(profile.url, t.base);
    assert.equal(profile.auth, 'oauth');
    assert.equal(profile.user, user.email);
    assert.match(profile.access_token, /^[A-Za-z0-9_-]{43}$/);
    assert.match(profile.refresh_token, /^[A-Za-z0-9_-]{43}$/);
    const lifetime = Date.parse(profile.expires_at) - Date.now();
    assert.ok(lifetime > 0 && lifetime <= ACCESS_TTL * 1000, `expires in ${lifetime} ms`);
    assert.equal(
      profile.scope,
      t.ctx.scopes
        .names()
        .filter((s) => s !== 'admin')
        .join(' '),
    );
    assert.deepEqual(fs.readdirSync(path.dirname(hostsFile())), ['hosts.json'], 'no temporary file or lock left');
  });

  it('whoami: e-mail, server and scopes; --json parses', async () => {
    const plain = await cli(['whoami'], env());
    assert.equal(plain.code, 0, plain.stderr);
    assert.match(plain.stdout, new RegExp(`^email\\t${user.email}\\nserver\\t${t.base}\\nscopes\\tread:profile `));
    const json = await cli(['whoami', '--json'], env());
    assert.equal(json.code, 0, json.stderr);
    const who = JSON.parse(json.stdout);
    assert.equal(who.email, user.email);
    assert.equal(who.server, t.base);
    assert.ok(who.scopes.includes('write:webhooks') && !who.scopes.includes('admin'));
  });

  let team: { id: string; slug: string };

  it('teams create, list and show (by slug)', async () => {
    const created = await cli(['teams', 'create', 'Rocket Crew', '--json'], env());
    assert.equal(created.code, 0, created.stderr);
    team = JSON.parse(created.stdout);
    assert.equal((team as { name?: string }).name, 'Rocket Crew');
    assert.equal((team as { role?: string }).role, 'owner');
    const listed = await cli(['teams', 'list'], env());
    assert.equal(listed.code, 0, listed.stderr);
    assert.equal(listed.stdout, `${team.id}\tRocket Crew\t${team.slug}\towner\n`, 'tab-separated when not a terminal');
    const listedJson = JSON.parse((await cli(['teams', 'list', '--json'], env())).stdout);
    assert.deepEqual(
      listedJson.map((t: { id: string }) => t.id),
      [team.id],
      'a JSON array of the items',
    );
    const shown = await cli(['teams', 'show', team.slug], env());
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, new RegExp(`^id\\t${team.id}\\nname\\tRocket Crew\\n`));
    const members = JSON.parse((await cli(['members', 'list', team.slug, '--json'], env())).stdout);
    assert.deepEqual(
      members.map((m: { email: string; role: string }) => [m.email, m.role]),
      [[user.email, 'owner']],
    );
  });

  it('invitations create: the invitation is made and its e-mail written', async () => {
    const result = await cli(
      ['invitations', 'create', team.slug, 'newcomer@example.org', '--role', 'admin', '--json'],
      env(),
    );
    assert.equal(result.code, 0, result.stderr);
    const invitation = JSON.parse(result.stdout);
    assert.equal(invitation.email, 'newcomer@example.org');
    assert.equal(invitation.role, 'admin');
    assert.equal(invitation.status, 'pending');
    await sendQueuedMail(t.ctx);
    const mail = readMailbox(t.env.SERVICE_DATA_DIR).filter((m) =>
      m.headers.get('to')?.includes('newcomer@example.org'),
    );
    assert.equal(mail.length, 1);
    assert.match(mail[0].headers.get('subject') ?? '', /invited you to join Rocket Crew/);
    const listed = await cli(['invitations', 'list', team.id], env());
    assert.match(listed.stdout, new RegExp(`^${invitation.id}\\tnewcomer@example\\.org\\tadmin\\tpending\\t`));
  });

  it('webhooks create: the signing secret is printed once, never again', async () => {
    const created = await cli(
      ['webhooks', 'create', team.slug, '--url', 'https://127.0.0.1:9/hook', '--event', 'team.member.added'],
      env(),
    );
    assert.equal(created.code, 0, created.stderr);
    const id = /^id\t(\S+)$/m.exec(created.stdout)![1];
    const secret = /^secret\t(\S+)$/m.exec(created.stdout)?.[1];
    assert.ok(secret && Buffer.from(secret, 'base64').length === 32, created.stdout);
    assert.match(created.stderr, /not shown again/);
    const shown = await cli(['webhooks', 'show', team.slug, id, '--json'], env());
    assert.equal(JSON.parse(shown.stdout).secret, undefined);
    assert.equal(JSON.parse(shown.stdout).url, 'https://127.0.0.1:9/hook');
    const listed = await cli(['webhooks', 'list', team.slug], env());
    assert.ok(!listed.stdout.includes(secret), 'the list does not show it');
    const disabled = await cli(['webhooks', 'update', team.slug, id, '--disable', '--json'], env());
    assert.equal(JSON.parse(disabled.stdout).is_active, false);
  });

  it('api: any request with the stored credentials; --paginate gathers every item', async () => {
    const me = await cli(['api', 'GET', '/api/v1/me/'], env());
    assert.equal(me.code, 0, me.stderr);
    assert.equal(JSON.parse(me.stdout).email, user.email);
    const patched = await cli(['api', 'PATCH', '/api/v1/me/', '-f', 'display_name=Captain'], env());
    assert.equal(patched.code, 0, patched.stderr);
    assert.equal(JSON.parse(patched.stdout).display_name, 'Captain');
    // Two pages of teams, of another user (whose PAT is given by SVC_TOKEN).
    const busy = await t.user();
    for (let i = 0; i < 52; i++) await t.team(busy.id, `Busy ${i}`);
    const busyEnv = { ...env(), SVC_TOKEN: await t.token(busy.id, []) };
    const all = await cli(['api', 'GET', '/api/v1/teams/', '--paginate'], busyEnv);
    assert.equal(all.code, 0, all.stderr);
    assert.equal(JSON.parse(all.stdout).length, 52, 'two pages in one array');
    const secondPage = JSON.parse((await cli(['api', 'GET', '/api/v1/teams/', '-f', 'page=2'], busyEnv)).stdout);
    assert.equal(secondPage.results.length, 2);
  });

  it('SVC_TOKEN overrides the stored credentials (and SVC_URL the server)', async () => {
    const other = await t.user();
    const token = await t.token(other.id, ['read:profile']);
    const result = await cli(['whoami', '--json'], { ...env(), SVC_TOKEN: token });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(JSON.parse(result.stdout).email, other.email);
    assert.equal(JSON.parse(result.stdout).scopes, null, "a personal access token's scopes are not known here");
    const closed = await new Promise<number>((resolve) => {
      const server = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as net.AddressInfo;
        server.close(() => resolve(port));
      });
    });
    const elsewhere = await cli(['whoami'], { ...env(), SVC_TOKEN: token, SVC_URL: `http://127.0.0.1:${closed}` });
    assert.equal(elsewhere.code, 1);
    assert.match(elsewhere.stderr, /^svc-cli: cannot reach the server: ECONNREFUSED\n$/);
  });

  it('an expired access token is refreshed: the rotated pair replaces the old one in hosts.json', async () => {
    const before = stored();
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, Date.parse(before.expires_at) - Date.now()) + 500));
    assert.equal(
      (await get(`${t.base}/api/v1/me/`, { authorization: `Bearer ${before.access_token}` })).status,
      401,
      'it has expired',
    );
    const result = await cli(['whoami'], env());
    assert.equal(result.code, 0, result.stderr);
    const afterwards = stored();
    assert.notEqual(afterwards.access_token, before.access_token);
    assert.notEqual(afterwards.refresh_token, before.refresh_token, 'rotated');
    assert.ok(Date.parse(afterwards.expires_at) > Date.now());
    assert.equal(fs.statSync(hostsFile()).mode & 0o777, 0o600);
    assert.equal(
      (await get(`${t.base}/api/v1/me/`, { authorization: `Bearer ${afterwards.access_token}` })).status,
      200,
    );
  });

  it('a refresh that fails ends with exit 4 and says to log in again', async () => {
    const hosts = JSON.parse(fs.readFileSync(hostsFile(), 'utf8'));
    hosts.profiles.stale = {
      ...hosts.profiles.default,
      refresh_token: 'x'.repeat(43),
      expires_at: new Date(Date.now() - 1000).toISOString(),
    };
    fs.writeFileSync(hostsFile(), JSON.stringify(hosts));
    const result = await cli(['whoami', '--profile', 'stale'], env());
    assert.equal(result.code, 4);
    assert.match(
      result.stderr,
      /^svc-cli: the login to http:\/\/127\.0\.0\.1:\d+ has expired or was revoked \(invalid_grant\): run `svc-cli login`\n$/,
    );
  });

  it('on a terminal: an aligned table with a bold header; no colour with NO_COLOR', async () => {
    // script(1) runs the command on a pseudo-terminal.
    const onTty = async (extra: Record<string, string>) =>
      (
        await promisify(execFile)('script', ['-qec', `${process.execPath} ${BIN} teams list`, '/dev/null'], {
          env: { PATH: process.env.PATH, TERM: 'xterm', ...env(), ...extra },
        })
      ).stdout.replace(/\r\n/g, '\n');
    const coloured = await onTty({});
    assert.ok(coloured.startsWith('\u001b[1mID'), JSON.stringify(coloured));
    const plain = await onTty({ NO_COLOR: '1' });
    const lines = plain.trimEnd().split('\n');
    const slugWidth = Math.max(4, team.slug.length);
    assert.deepEqual(lines, [
      `${'ID'.padEnd(36)}  ${'NAME'.padEnd(11)}  ${'SLUG'.padEnd(slugWidth)}  ROLE`,
      `${team.id}  Rocket Crew  ${team.slug.padEnd(slugWidth)}  owner`,
    ]);
    assert.ok(!plain.includes('\u001b['), 'no escape codes');
  });

  it('exit codes: 0 ok, 1 failure with the problem on one line and a line per field, 2 usage, 4 authentication', async () => {
    assert.equal((await cli(['teams', 'list'], env())).code, 0);

    const missing = await cli(['teams', 'show', '00000000-0000-4000-8000-000000000000'], env());
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /^svc-cli: Not Found: .+\n$/);
    const invalid = await cli(['teams', 'create', ''], env());
    assert.equal(invalid.code, 1);
    assert.match(invalid.stderr, /^svc-cli: Bad Request: .+\n {2}name: .+\n$/);

    for (const args of [
      ['teams', 'create'],
      ['teams', 'list', '--bogus'],
      ['nothing'],
      ['members', 'set-role', team.slug, user.email, 'boss'],
      ['api', 'GET', 'no-slash'],
    ]) {
      const usage = await cli(args, env());
      assert.equal(usage.code, 2, `${args.join(' ')}: ${usage.stderr}`);
      assert.match(usage.stderr, /^svc-cli: .+\n$/);
    }
    const elsewhere = tempHome();
    try {
      const none = await cli(['whoami'], { ...elsewhere.env, SVC_URL: t.base });
      assert.equal(none.code, 4);
      assert.match(none.stderr, /^svc-cli: not logged in to .+: run `svc-cli login` \(or set SVC_TOKEN\)\n$/);
      const refused = await cli(['whoami'], { ...elsewhere.env, SVC_URL: t.base, SVC_TOKEN: 'svc_nope' });
      assert.equal(refused.code, 4);
      assert.match(refused.stderr, /^svc-cli: Unauthorized: .+\n$/);
    } finally {
      elsewhere.remove();
    }
    const help = await cli(['webhooks', 'create', '--help'], env());
    assert.equal(help.code, 0);
    assert.match(help.stdout, /^Usage: svc-cli webhooks create TEAM --url URL/);
  });

  it('a login denied in the browser ends with exit 4; --no-browser opens nothing', async () => {
    const elsewhere = tempHome();
    const opener = fakeOpener(elsewhere.home);
    try {
      const child = spawnCli(['login', '--url', t.base, '--no-browser', '--scopes', 'read:profile'], {
        ...elsewhere.env,
        DISPLAY: ':99',
        PATH: `${opener.bin}:${process.env.PATH}`,
      });
      const done = finished(child, 100_000);
      const [, uri, code] = await stderrMatch(child, /^(http:\/\/\S+)\n.*\n([B-Z]{4}-[B-Z]{4})\n/m);
      await answerInBrowser(uri, code, 'deny');
      const result = await done;
      assert.equal(result.code, 4);
      assert.match(result.stderr, /svc-cli: the login was denied in the browser\n$/);
      assert.deepEqual(opener.opened(), []);
      assert.equal(fs.existsSync(path.join(elsewhere.config, 'svc', 'hosts.json')), false);
    } finally {
      elsewhere.remove();
    }
  });

  it('logout revokes the tokens at the server and forgets them', async () => {
    const before = stored();
    const result = await cli(['logout'], env());
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, /Logged out of http:\/\/127\.0\.0\.1:\d+\./);
    assert.equal(JSON.parse(fs.readFileSync(hostsFile(), 'utf8')).profiles.default, undefined);
    assert.equal((await get(`${t.base}/api/v1/me/`, { authorization: `Bearer ${before.access_token}` })).status, 401);
    const refresh = await postForm(`${t.base}/o/token/`, {
      grant_type: 'refresh_token',
      refresh_token: before.refresh_token,
      client_id: 'svc-cli',
    });
    assert.equal(refresh.body.error, 'invalid_grant');
    assert.equal((await cli(['whoami'], env())).code, 4);
  });
});
