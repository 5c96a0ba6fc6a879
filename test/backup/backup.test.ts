// `svc backup --to FILE` as an operator runs it: real `svc serve --no-worker` and `svc worker`
// processes keep writing (API team creations and profile updates, whose webhook deliveries the
// worker makes) while backups are taken; each backup must pass SQLite's integrity_check and hold
// every team created before it began, and a fresh `svc serve` on a copy of one serves them through
// the API with a token made before it. Also: the WAL's committed data is in the copy, an existing
// file is refused and left as it was, progress shows on a terminal only, and PostgreSQL is sent to
// pg_dump.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { createContext } from '../../src/context.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { addMember, createTeam } from '../../src/teams/teams.ts';
import { createPat } from '../../src/tokens/pats.ts';
import { NODE, ROOT, processEnv, svc } from '../cli/cli-helpers.ts';
import { FIXTURE_ACTOR, TEST_SECRET_KEY, bearer } from '../support/app.ts';
import { freshDatabase } from '../support/database.ts';
import { spawnSvc, stop, type Svc } from '../webhooks/processes.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { FAST_RETRIES } from '../webhooks/setup.ts';
import { verifiedUserRows } from '../support/users.ts';

const sqliteOnly = process.env.TEST_DATABASE_URL ? 'SQLite only: `svc backup` copies the embedded database' : false;

/** The figure: the backups are taken during this long a stretch of steady writes. */
const WRITE_SECONDS = 30;
/** Backups start this many seconds into the writes. */
const BACKUP_AT_SECONDS = [8, 16, 24];
/** Users put in before the processes start, so that the database spans thousands of pages. */
const FILLER_USERS = 40_000;

/** The environment of a process on the SQLite file in `dataDir`. */
function sqliteEnv(dataDir: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    NODE_ENV: 'test',
    SERVICE_DATA_DIR: dataDir,
    DATABASE_URL: `sqlite:${path.join(dataDir, 'service.sqlite3')}`,
    SECRET_KEY: TEST_SECRET_KEY,
    BASE_URL: 'http://testserver',
    LOG_LEVEL: 'warn',
    PORT: '0',
    SERVICE_THROTTLE_USER: '1000000/hour',
    ...extra,
  };
}

function fileMode(file: string): number {
  return fs.statSync(file).mode & 0o777;
}

/** Opens a backup (or a copy of one) and returns what a check needs; closes it again. */
function inspect(file: string) {
  const db = new DatabaseSync(file);
  try {
    return {
      integrity: (db.prepare('PRAGMA integrity_check').all() as { integrity_check: string }[]).map(
        (row) => row.integrity_check,
      ),
      teamIds: new Set((db.prepare('SELECT id FROM teams').all() as { id: string }[]).map((row) => row.id)),
      teamsWithoutOneOwner: (
        db
          .prepare(
            "SELECT t.id FROM teams t WHERE (SELECT count(*) FROM memberships m WHERE m.team_id = t.id AND m.role = 'owner') <> 1",
          )
          .all() as { id: string }[]
      ).map((row) => row.id),
      users: (db.prepare('SELECT count(*) AS n FROM users').get() as { n: number }).n,
    };
  } finally {
    db.close();
  }
}

/**
 * Runs `svc …` on a pseudo-terminal (script(1)), as an operator at a terminal does, and returns
 * what it printed there (stdout and stderr both), with the terminal's CRLF line ends made LF.
 */
async function onTerminal(env: Record<string, string>, argv: string[]): Promise<string> {
  const command = [NODE, '--disable-warning=ExperimentalWarning', 'src/main.ts', ...argv].join(' ');
  const { stdout } = await promisify(execFile)('script', ['-qfec', command, '/dev/null'], {
    cwd: ROOT,
    env: processEnv(env),
  });
  return stdout.replace(/\r\n/g, '\n');
}

/** The progress a terminal showed: each "copied N of M pages" in order. */
function progressOf(output: string): { copied: number; total: number }[] {
  return [...output.matchAll(/copied (\d+) of (\d+) pages \(\d+%\)/g)].map((match) => ({
    copied: Number(match[1]),
    total: Number(match[2]),
  }));
}

/** The row count `svc backup` printed for `table`. */
function printedRows(stdout: string, table: string): number {
  const match = new RegExp(`^${table} +(\\d+)$`, 'm').exec(stdout);
  assert.ok(match, `svc backup printed the row count of ${table}:\n${stdout}`);
  return Number(match[1]);
}

describe('svc backup of the live SQLite database (real processes)', { skip: sqliteOnly }, () => {
  let dataDir: string;
  let env: Record<string, string>;
  let receiver: Receiver;
  let server: Svc;
  let worker: Svc;
  let url: string;
  let ownerToken: string;
  let memberToken: string;
  let hubTeamId: string;
  let subscriptionId: string;

  before(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-backup-'));
    receiver = await startReceiver();
    env = sqliteEnv(dataDir, {
      SERVICE_WEBHOOKS_ENABLED: 'true',
      SERVICE_WEBHOOKS_ALLOWED_CIDRS: '127.0.0.1/32',
      SERVICE_WEBHOOKS_RETRY_DELAYS: FAST_RETRIES,
    });
    const ctx = createContext(loadConfig(env));
    try {
      await migrateToLatest(ctx.db);
      const db = ctx.db.kysely;
      const user = await verifiedUserRows();
      const [ownerId, memberId] = (
        await db
          .insertInto('users')
          .values([user('owner@example.com'), user('member@example.com')])
          .returning('id')
          .execute()
      ).map((row) => row.id);
      await db.transaction().execute(async (trx) => {
        for (let i = 0; i < FILLER_USERS; i += 500) {
          await trx
            .insertInto('users')
            .values(Array.from({ length: 500 }, (_, j) => user(`filler-${i + j}@example.com`)))
            .execute();
        }
      });
      ownerToken = (
        await createPat(db, {
          userId: ownerId,
          name: 'owner',
          scopes: ['read:teams', 'write:teams', 'webhooks:manage'],
          expiresAt: null,
        })
      ).token;
      memberToken = (
        await createPat(db, { userId: memberId, name: 'member', scopes: ['write:profile'], expiresAt: null })
      ).token;
      // The member's profile updates are events of the hub team, which the worker delivers.
      hubTeamId = (await createTeam(db, { name: 'Hub', ownerId }, FIXTURE_ACTOR)).id;
      await addMember(db, hubTeamId, memberId, 'member', FIXTURE_ACTOR);
    } finally {
      await ctx.db.close();
    }
    server = await spawnSvc(['serve', '--no-worker'], env);
    worker = await spawnSvc(['worker'], env);
    [, url] = await server.waitForLine(/svc listening on (http:\/\/[\d.]+:\d+) /, 120_000);
    await worker.waitForLine(/svc worker running/, 120_000);
    const subscription = await post('/api/v1/teams/' + hubTeamId + '/webhooks/', ownerToken, {
      url: receiver.url,
      events: ['*'],
    });
    assert.equal(subscription.status, 201);
    subscriptionId = ((await subscription.json()) as { id: string }).id;
  });

  after(async () => {
    await Promise.all([server && stop(server), worker && stop(worker)]);
    await receiver?.close();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const request = (base: string, method: string, route: string, token: string, body?: unknown) =>
    fetch(`${base}${route}`, {
      method,
      headers: { ...bearer(token), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const post = (route: string, token: string, body: unknown) => request(url, 'POST', route, token, body);

  it(
    `backups taken during ${WRITE_SECONDS} s of steady writes pass integrity_check, a server started on one serves what was written before it began, progress shows on a terminal only`,
    { timeout: 300_000 },
    async () => {
      const teams: { id: string; at: number }[] = [];
      const failures: string[] = [];
      const started = Date.now();
      const writing = () => Date.now() - started < WRITE_SECONDS * 1000;
      // Two steady writers on `svc serve`: team creations (a team and its owner's membership per
      // transaction) and profile updates (each an event that `svc worker` delivers and records).
      const teamWriter = (async () => {
        for (let i = 0; writing(); i++) {
          const response = await post('/api/v1/teams/', ownerToken, { name: `Team ${i}` });
          if (response.status === 201)
            teams.push({ id: ((await response.json()) as { id: string }).id, at: Date.now() });
          else failures.push(`team ${i}: ${response.status} ${await response.text()}`);
          await sleep(10);
        }
      })();
      const profileWriter = (async () => {
        for (let i = 0; writing(); i++) {
          const response = await request(url, 'PATCH', '/api/v1/me/', memberToken, { first_name: `Name ${i}` });
          if (response.status !== 200) failures.push(`profile ${i}: ${response.status} ${await response.text()}`);
          await sleep(20);
        }
      })();

      // The middle backup runs on a terminal: its progress must only go forward, over one snapshot's
      // total (SQLite's backup starts over when another connection commits between two steps of a
      // copy that is not held to one snapshot, and the count then drops back).
      const backups: {
        file: string;
        began: number;
        ended: number;
        stdout: string;
        createdBefore: string[];
        progress?: { copied: number; total: number }[];
      }[] = [];
      for (const [i, seconds] of BACKUP_AT_SECONDS.entries()) {
        await sleep(started + seconds * 1000 - Date.now());
        const file = path.join(dataDir, `backup-${i}.sqlite3`);
        const began = Date.now();
        const createdBefore = teams.filter((team) => team.at < began).map((team) => team.id);
        if (i === 1) {
          const output = await onTerminal(env, ['backup', '--to', file]);
          backups.push({ file, began, ended: Date.now(), stdout: output, createdBefore, progress: progressOf(output) });
          continue;
        }
        const result = await svc(env, ['backup', '--to', file]);
        assert.equal(result.code, 0, result.stderr);
        assert.equal(result.stderr, '', 'piped, nothing but the result');
        assert.doesNotMatch(result.stdout, /copied/, 'piped, no progress');
        backups.push({ file, began, ended: Date.now(), stdout: result.stdout, createdBefore });
      }
      await Promise.all([teamWriter, profileWriter]);
      assert.deepEqual(failures, [], 'every write during the backups succeeded');
      const delivered = receiver.received.length;
      await Promise.all([stop(server), stop(worker)]);

      for (const backup of backups) {
        assert.ok(
          teams.some((team) => team.at > backup.began && team.at < backup.ended),
          'teams were being created while the backup ran',
        );
        assert.equal(fileMode(backup.file), 0o600, 'only its owner can read the backup');
        assert.deepEqual(
          fs.readdirSync(dataDir).filter((name) => name.includes('.partial')),
          [],
          'no temporary file is left',
        );
        assert.match(
          backup.stdout,
          new RegExp(
            `^backup written to ${backup.file}: .* \\(${fs.statSync(backup.file).size} bytes, \\d+ pages\\)$`,
            'm',
          ),
        );
        const content = inspect(backup.file);
        assert.deepEqual(content.integrity, ['ok'], 'PRAGMA integrity_check');
        assert.deepEqual(
          backup.createdBefore.filter((id) => !content.teamIds.has(id)),
          [],
          'every team created before the backup began is in it',
        );
        assert.deepEqual(content.teamsWithoutOneOwner, [], 'each team with its owner: whole transactions only');
        assert.equal(printedRows(backup.stdout, 'teams'), content.teamIds.size);
        assert.equal(printedRows(backup.stdout, 'users'), FILLER_USERS + 2);
        assert.ok(printedRows(backup.stdout, 'webhook_deliveries') > 0, 'the worker had recorded deliveries');
        assert.ok(
          printedRows(backup.stdout, 'audit_entries') >= backup.createdBefore.length,
          'each team created before the backup began, with its audit entry',
        );
      }
      assert.ok(delivered > 0, 'the worker delivered events during the writes');
      const progress = backups[1].progress!;
      assert.ok(progress.length >= 3, `progress lines on a terminal:\n${backups[1].stdout}`);
      const total = progress[0].total;
      assert.ok(total > 1000, 'the database spans thousands of pages');
      assert.ok(
        progress.some((step) => step.copied > 0 && step.copied < total),
        'partial progress is shown',
      );
      assert.deepEqual(progress.at(-1), { copied: total, total }, 'it ends at the total');
      for (const [i, step] of progress.entries()) {
        assert.equal(step.total, total, 'one snapshot: the total never changes');
        if (i > 0)
          assert.ok(step.copied > progress[i - 1].copied, `progress only goes forward: ${JSON.stringify(progress)}`);
      }

      // A fresh server in a new data directory, on a copy of the middle backup, with the same SECRET_KEY.
      const chosen = backups[1];
      const restoreDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-restore-'));
      try {
        fs.copyFileSync(chosen.file, path.join(restoreDir, 'service.sqlite3'));
        const expected = inspect(path.join(restoreDir, 'service.sqlite3')).teamIds;
        const restored = await spawnSvc(['serve', '--no-worker'], sqliteEnv(restoreDir));
        try {
          const [, restoredUrl] = await restored.waitForLine(/svc listening on (http:\/\/[\d.]+:\d+) /, 120_000);
          const listed: string[] = [];
          for (let page = 1; ; page++) {
            const response = await request(restoredUrl, 'GET', `/api/v1/teams/?page=${page}`, ownerToken);
            assert.equal(response.status, 200, await response.clone().text());
            const body = (await response.json()) as { next: string | null; results: { id: string }[] };
            listed.push(...body.results.map((team) => team.id));
            if (!body.next) break;
          }
          assert.deepEqual(
            chosen.createdBefore.filter((id) => !listed.includes(id)),
            [],
            'every team created before the backup is listed, with a token made before it',
          );
          assert.deepEqual(new Set(listed), expected, 'the restored server lists exactly the teams in the backup');
          const hooks = await request(restoredUrl, 'GET', `/api/v1/teams/${hubTeamId}/webhooks/`, ownerToken);
          assert.equal(hooks.status, 200);
          assert.deepEqual(
            ((await hooks.json()) as { results: { id: string }[] }).results.map((hook) => hook.id),
            [subscriptionId],
          );
        } finally {
          await stop(restored);
        }
        assert.doesNotMatch(restored.output(), /"level":(50|60)/, 'the restored server logged no error');
      } finally {
        fs.rmSync(restoreDir, { recursive: true, force: true });
      }
      for (const process of [server, worker])
        assert.doesNotMatch(
          process.output(),
          /"level":(50|60)|database is busy|database is locked/,
          'no database error logged',
        );
    },
  );

  it('refuses a file that exists and leaves it unchanged (exit 2)', async () => {
    const existing = path.join(dataDir, 'existing.sqlite3');
    fs.writeFileSync(existing, 'an earlier backup');
    const stat = fs.statSync(existing);
    const listing = fs.readdirSync(dataDir).sort();
    const result = await svc(env, ['backup', '--to', existing]);
    assert.equal(result.code, 2);
    assert.equal(result.stdout, '');
    assert.equal(result.stderr.split('\n')[0], `svc: ${existing} already exists; svc backup never replaces a file`);
    assert.equal(fs.readFileSync(existing, 'utf8'), 'an earlier backup');
    assert.equal(fs.statSync(existing).mtimeMs, stat.mtimeMs);
    assert.deepEqual(fs.readdirSync(dataDir).sort(), listing, 'nothing written beside it');
  });
});

describe('svc backup copies what is committed in the WAL', { skip: sqliteOnly }, () => {
  let dataDir: string;
  before(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-backup-wal-'));
  });
  after(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it(
    'a user created while another connection keeps the WAL from being checkpointed is in the backup',
    { timeout: 60_000 },
    async () => {
      const env = sqliteEnv(dataDir);
      assert.equal((await svc(env, ['migrate'])).code, 0);
      const live = path.join(dataDir, 'service.sqlite3');
      // A connection that stays open: the CLI's close is then not the last one and leaves the WAL as
      // it is, as a running `svc serve` would.
      const holder = new DatabaseSync(live);
      try {
        holder.exec('PRAGMA wal_autocheckpoint = 0');
        holder.prepare('SELECT count(*) FROM users').get();
        const created = await svc(env, [
          'user',
          'create',
          '--email',
          'wal@example.com',
          '--password',
          'a long password here',
        ]);
        assert.equal(created.code, 0, created.stderr);
        // The main file alone (what copying it would give) does not have the user yet.
        const mainFileOnly = path.join(dataDir, 'main-file-only.sqlite3');
        fs.copyFileSync(live, mainFileOnly);
        assert.equal(inspect(mainFileOnly).users, 0, 'the user is only in the WAL');

        const file = path.join(dataDir, 'backup.sqlite3');
        const result = await svc(env, ['backup', '--to', file]);
        assert.equal(result.code, 0, result.stderr);
        assert.equal(printedRows(result.stdout, 'users'), 1);
        const content = inspect(file);
        assert.deepEqual(content.integrity, ['ok']);
        assert.equal(content.users, 1);
      } finally {
        holder.close();
      }
    },
  );
});

describe('svc backup on PostgreSQL', () => {
  it('says to use pg_dump and exits 2, writing nothing', async () => {
    // With TEST_DATABASE_URL the test's own schema; else an address nothing listens on, which the
    // command must not even try to reach.
    const database = process.env.TEST_DATABASE_URL ? await freshDatabase() : null;
    const dataDir = database?.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'svc-backup-pg-'));
    try {
      const env = { ...sqliteEnv(dataDir), DATABASE_URL: database?.url ?? 'postgres://nobody@127.0.0.1:1/none' };
      const file = path.join(dataDir, 'backup.sqlite3');
      const listing = fs.readdirSync(dataDir).sort();
      const result = await svc(env, ['backup', '--to', file]);
      assert.equal(result.code, 2);
      assert.equal(result.stdout, '');
      assert.equal(
        result.stderr.split('\n')[0],
        'svc: DATABASE_URL is PostgreSQL: back it up with pg_dump (docs/operations.md); svc backup copies the embedded SQLite database',
      );
      assert.deepEqual(fs.readdirSync(dataDir).sort(), listing, 'nothing written');
    } finally {
      if (database) await database.drop();
      else fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
