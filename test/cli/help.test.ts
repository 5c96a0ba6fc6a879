// The `svc` CLI as people meet it, run as real subprocesses: help on stdout with exit 0 (for the
// whole CLI and for every command), one line and the usage with exit 2 for an unknown command or
// option, one line `svc: <what went wrong>` with exit 1 for a failure, and a stack trace only with
// --debug or SERVICE_DEBUG=1.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { allCommands } from '../../src/main.ts';
import { insertSuppression } from '../../src/mail/suppressions.ts';
import type { Command } from '../../src/cli/framework.ts';
import { startApp, type TestApp } from '../support/app.ts';
import { svc, type CliResult } from './cli-helpers.ts';

describe('svc help, usage errors and failures (real processes)', () => {
  let t: TestApp;
  let commands: Command[];
  // Help needs no database: it runs on an empty data directory and must leave it empty.
  let emptyDir: string;
  let helpEnv: Record<string, string>;

  before(async () => {
    t = await startApp();
    commands = await allCommands();
    emptyDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-help-'));
    helpEnv = { NODE_ENV: 'test', SERVICE_DATA_DIR: emptyDir, LOG_LEVEL: 'silent' };
  });
  after(async () => {
    fs.rmSync(emptyDir, { recursive: true, force: true });
    await t.close();
  });

  /** Runs the given command lines, a few processes at a time (two cores). */
  async function runAll(env: Record<string, string>, lines: string[][]): Promise<CliResult[]> {
    const results: CliResult[] = new Array(lines.length);
    let next = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < lines.length) {
          const index = next++;
          results[index] = await svc(env, lines[index]);
        }
      }),
    );
    return results;
  }

  it('svc --help, svc -h and svc help print every command with what it does on stdout and exit 0', async () => {
    const results = await runAll(helpEnv, [['--help'], ['-h'], ['help']]);
    for (const result of results) {
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stderr, '');
      assert.match(result.stdout, /^Usage: svc <command> \[options\]\n/);
      for (const command of commands) {
        assert.ok(result.stdout.includes(`  ${command.usage}\n      ${command.summary}\n`), `lists ${command.usage}`);
      }
      assert.match(result.stdout, /--debug/);
      assert.match(result.stdout, /Exit codes: 0 success, 1 failure .*, 2 unknown command or bad arguments/);
    }
    assert.equal(results[1].stdout, results[0].stdout);
    assert.equal(results[2].stdout, results[0].stdout);
  });

  it('--help on every command prints its usage and summary on stdout, exits 0, and touches nothing', async () => {
    const lines = commands.map((command) => [...command.path, '--help']);
    // `svc help <command>` says the same, and help wins over anything else on the line.
    for (const command of commands.filter((c) => ['team create', 'serve'].includes(c.path.join(' ')))) {
      lines.push(['help', ...command.path], [...command.path, '--bogus', 'x', '-h']);
    }
    const results = await runAll(helpEnv, lines);
    results.forEach((result, i) => {
      const command = commands.find(
        (c) =>
          c.path.join(' ') ===
          lines[i].filter((word) => word !== 'help' && !word.startsWith('-') && word !== 'x').join(' '),
      )!;
      assert.equal(result.code, 0, `svc ${lines[i].join(' ')}: ${result.stderr}`);
      assert.equal(result.stderr, '');
      assert.equal(result.stdout.split('\n\n')[0], `Usage: ${command.usage}`, lines[i].join(' '));
      assert.ok(
        result.stdout.includes(`\n${command.summary}\n`),
        `svc ${lines[i].join(' ')} says what the command does`,
      );
    });
    assert.deepEqual(fs.readdirSync(emptyDir), [], 'no database, no secret key: help opens nothing');
  });

  it('a command group with --help lists its commands; alone it is one line and the group usage, exit 2', async () => {
    const [help, bare] = await runAll(helpEnv, [['team', '--help'], ['team']]);
    assert.equal(help.code, 0);
    const teamUsages = commands.filter((command) => command.path[0] === 'team').map((command) => command.usage);
    assert.equal(teamUsages.length, 4);
    for (const usage of teamUsages) assert.ok(help.stdout.includes(`  ${usage}\n`), usage);
    assert.ok(!help.stdout.includes('svc token create'), 'only the group');
    assert.equal(bare.code, 2);
    assert.equal(bare.stdout, '');
    assert.match(
      bare.stderr,
      /^svc: "team" needs one of the commands below\nUsage: svc <command> \[options\]\n[\s\S]*svc team create/,
    );
  });

  it('an unknown command or option: one line, then the usage, on stderr; exit 2; nothing written', async () => {
    const [command, subcommand, option, positional, helpOfNothing] = await runAll(t.env, [
      ['frobnicate'],
      ['user', 'delete', '--email', 'a@example.com'],
      ['team', 'create', '--name', 'X', '--owner', 'a@example.com', '--bogus'],
      ['token', 'list', 'a@example.com'],
      ['help', 'frobnicate'],
    ]);
    const fullUsage = (await svc(helpEnv, ['--help'])).stdout;
    assert.deepEqual(command, { code: 2, stdout: '', stderr: `svc: unknown command "frobnicate"\n${fullUsage}` });
    assert.equal(subcommand.code, 2);
    assert.match(
      subcommand.stderr,
      /^svc: unknown command "user delete"\nUsage: svc <command> \[options\]\n[\s\S]*svc user create/,
    );
    assert.deepEqual(option, {
      code: 2,
      stdout: '',
      stderr: "svc: unknown option '--bogus'\nUsage: svc team create --name N [--slug S] --owner EMAIL\n",
    });
    assert.deepEqual(positional, {
      code: 2,
      stdout: '',
      stderr: "svc: unexpected argument 'a@example.com'\nUsage: svc token list --email E [--json]\n",
    });
    assert.deepEqual(helpOfNothing, command);
    assert.equal((await t.ctx.db.kysely.selectFrom('teams').select('id').execute()).length, 0);
  });

  it('a failure is one line on stderr, `svc: <what went wrong>`, exit 1', async () => {
    const [noUser, noTeam, badSetting] = await Promise.all([
      svc(t.env, ['user', 'deactivate', '--email', 'a@example.com']),
      svc(t.env, ['team', 'activate', '--team', 'no-such-team']),
      svc({ ...t.env, PORT: 'eighty' }, ['migrate']),
    ]);
    assert.deepEqual(noUser, { code: 1, stdout: '', stderr: 'svc: no user with e-mail a@example.com\n' });
    assert.deepEqual(noTeam, { code: 1, stdout: '', stderr: 'svc: no team with id or slug "no-such-team"\n' });
    assert.deepEqual(badSetting, {
      code: 1,
      stdout: '',
      stderr: 'svc: configuration error: PORT must be an integer, got "eighty"\n',
    });
  });

  it('an unexpected failure is one line; --debug (anywhere) or SERVICE_DEBUG=1 adds its stack trace', async () => {
    // A database "file" that is a directory: SQLite cannot open it.
    const env = { ...helpEnv, DATABASE_URL: `sqlite:${emptyDir}` };
    const [plain, debugFirst, debugLast, debugEnv] = await Promise.all([
      svc(env, ['migrate']),
      svc(env, ['--debug', 'migrate']),
      svc(env, ['migrate', '--debug']),
      svc({ ...env, SERVICE_DEBUG: '1' }, ['migrate']),
    ]);
    const line = 'svc: unable to open database file\n';
    assert.deepEqual(plain, { code: 1, stdout: '', stderr: line });
    for (const result of [debugFirst, debugLast, debugEnv]) {
      assert.equal(result.code, 1);
      assert.ok(result.stderr.startsWith(line), result.stderr);
      assert.match(
        result.stderr.slice(line.length),
        /^Error: unable to open database file\n\s+at /,
        'the stack trace follows the line',
      );
    }
  });

  it('suppression list --json prints objects whose first key is id, like every other --json list', async () => {
    await insertSuppression(t.ctx.db.kysely, {
      email: 'bounced@example.com',
      reason: 'bounce',
      eventKey: 'msg-1',
      occurredAt: new Date().toISOString(),
    });
    const row = await t.ctx.db.kysely
      .selectFrom('mail_suppressions')
      .select('id')
      .where('email', '=', 'bounced@example.com')
      .executeTakeFirstOrThrow();
    const result = await svc(t.env, ['suppression', 'list', '--json']);
    assert.equal(result.code, 0, result.stderr);
    const rows = JSON.parse(result.stdout);
    assert.equal(rows.length, 1);
    assert.deepEqual(Object.keys(rows[0]), ['id', 'email', 'reason', 'event_key', 'occurred_at', 'created_at']);
    assert.deepEqual([rows[0].id, rows[0].email], [row.id, 'bounced@example.com']);
  });
});
