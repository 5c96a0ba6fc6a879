// Several processes writing to one SQLite file, as a deployment on the embedded database runs them:
// `svc serve` and `svc worker` (real child processes) deliver webhooks to a local HTTPS receiver
// while 50 `svc team create` processes and 200 API writes (team creation, profile updates, webhook
// subscription creation) start at once. Every process must wait for the write lock, never fail:
// zero failures, every row present exactly once, every event delivered.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { AppContext } from '../../src/app-context.ts';
import { loadConfig } from '../../src/config.ts';
import { createContext } from '../../src/context.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { createTeam, addMember } from '../../src/teams/teams.ts';
import { createPat } from '../../src/tokens/pats.ts';
import { svc, type CliResult } from '../cli/cli-helpers.ts';
import { FIXTURE_ACTOR, bearer, testEnv } from '../support/app.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';
import { spawnSvc, stop, type Svc } from '../webhooks/processes.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { FAST_RETRIES } from '../webhooks/setup.ts';
import { eventually } from '../support/wait.ts';
import { verifiedUserRows } from '../support/users.ts';

const CLI_TEAMS = 50;
const API_TEAMS = 80;
const PROFILE_UPDATES = 60;
const SIDE_TEAMS = 6;
const SUBSCRIPTIONS_PER_SIDE_TEAM = 10;

const sqliteOnly = process.env.TEST_DATABASE_URL ? 'SQLite only (on PostgreSQL writers wait on row locks)' : false;

describe(
  'SQLite: serve, worker, 50 CLI processes and 200 API writes on one database at once',
  { skip: sqliteOnly },
  () => {
    let database: TestDatabase;
    let env: Record<string, string>;
    let ctx: AppContext;
    let receiver: Receiver;
    let server: Svc;
    let worker: Svc;
    let url: string;
    let ownerEmail: string;
    let ownerToken: string;
    let hubTeamId: string;
    let sideTeamIds: string[];
    let members: { id: number; token: string }[];

    before(async () => {
      database = await freshDatabase();
      receiver = await startReceiver();
      env = testEnv(database, {
        PORT: '0',
        // Warnings and errors are logged, so that a database error in serve or the worker shows.
        LOG_LEVEL: 'warn',
        SERVICE_WEBHOOKS_ENABLED: 'true',
        SERVICE_WEBHOOKS_ALLOWED_CIDRS: '127.0.0.1/32',
        SERVICE_WEBHOOKS_RETRY_DELAYS: FAST_RETRIES,
      });
      ctx = createContext(loadConfig(env));
      await migrateToLatest(ctx.db);
      const db = ctx.db.kysely;
      const user = await verifiedUserRows();
      ownerEmail = 'owner@example.com';
      const emails = [ownerEmail, ...Array.from({ length: PROFILE_UPDATES }, (_, i) => `member-${i}@example.com`)];
      const ids = (await db.insertInto('users').values(emails.map(user)).returning('id').execute()).map(
        (row) => row.id,
      );
      const [ownerId, ...memberIds] = ids;
      ownerToken = (
        await createPat(db, {
          userId: ownerId,
          name: 'owner',
          scopes: ['write:teams', 'webhooks:manage'],
          expiresAt: null,
        })
      ).token;
      // Every profile update goes, as an event, to the hub team's subscription (the members' one team).
      hubTeamId = (await createTeam(db, { name: 'Hub', ownerId }, FIXTURE_ACTOR)).id;
      members = [];
      for (const id of memberIds) {
        await addMember(db, hubTeamId, id, 'member', FIXTURE_ACTOR);
        members.push({
          id,
          token: (await createPat(db, { userId: id, name: 'member', scopes: ['write:profile'], expiresAt: null }))
            .token,
        });
      }
      sideTeamIds = [];
      for (let i = 0; i < SIDE_TEAMS; i++)
        sideTeamIds.push((await createTeam(db, { name: `Side ${i}`, ownerId }, FIXTURE_ACTOR)).id);

      server = await spawnSvc(['serve'], env);
      worker = await spawnSvc(['worker'], env);
      [, url] = await server.waitForLine(/svc listening on (http:\/\/[\d.]+:\d+) /, 120_000);
      await worker.waitForLine(/svc worker running/, 120_000);
      const hub = await post(`/api/v1/teams/${hubTeamId}/webhooks/`, ownerToken, { url: receiver.url, events: ['*'] });
      assert.equal(hub.status, 201);
    });

    after(async () => {
      await Promise.all([server && stop(server), worker && stop(worker)]);
      await ctx?.db.close();
      await receiver?.close();
      await database?.drop();
    });

    const request = (method: string, path: string, token: string, body: unknown) =>
      fetch(`${url}${path}`, {
        method,
        headers: { ...bearer(token), 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const post = (path: string, token: string, body: unknown) => request('POST', path, token, body);

    // Most of its time is 50 processes starting at once, which keeps two cores busy; on a shared
    // machine that can pass npm test's default limit per test.
    it(
      'every write succeeds, every row is there exactly once, every event is delivered',
      { timeout: 300_000 },
      async () => {
        const cli = Array.from({ length: CLI_TEAMS }, (_, i) =>
          svc(env, ['team', 'create', '--name', `CLI team ${i}`, '--owner', ownerEmail], 240_000),
        );
        const api: Promise<{ what: string; status: number; body: { id?: string; first_name?: string } }>[] = [];
        const answer = (what: string, response: Promise<Response>) =>
          api.push(response.then(async (res) => ({ what, status: res.status, body: await res.json() })));
        for (let i = 0; i < API_TEAMS; i++)
          answer(`team ${i}`, post('/api/v1/teams/', ownerToken, { name: `API team ${i}` }));
        members.forEach((member, i) =>
          answer(`profile ${i}`, request('PATCH', '/api/v1/me/', member.token, { first_name: `Name ${i}` })),
        );
        for (let i = 0; i < SIDE_TEAMS * SUBSCRIPTIONS_PER_SIDE_TEAM; i++) {
          answer(
            `subscription ${i}`,
            post(`/api/v1/teams/${sideTeamIds[i % SIDE_TEAMS]}/webhooks/`, ownerToken, {
              url: `${receiver.url}/side`,
              events: ['*'],
            }),
          );
        }
        assert.equal(api.length, 200);
        const [cliResults, apiResults] = await Promise.all([Promise.all(cli), Promise.all(api)]);

        const failedCli = cliResults
          .map((result, i) => ({ i, ...result }))
          .filter((result: CliResult) => result.code !== 0 || result.stderr !== '');
        assert.deepEqual(failedCli, [], 'every `svc team create` succeeded');
        const failedApi = apiResults.filter(
          (result) => result.status !== (result.what.startsWith('profile') ? 200 : 201),
        );
        assert.deepEqual(failedApi, [], 'every API write succeeded');

        const db = ctx.db.kysely;
        const teams = await db.selectFrom('teams').select(['id', 'name']).execute();
        const owners = await db.selectFrom('memberships').select('team_id').where('role', '=', 'owner').execute();
        const printed = cliResults.map((result) => result.stdout.trim());
        const created = apiResults.filter((result) => result.what.startsWith('team')).map((result) => result.body.id);
        for (const [names, ids] of [
          [Array.from({ length: CLI_TEAMS }, (_, i) => `CLI team ${i}`), printed],
          [Array.from({ length: API_TEAMS }, (_, i) => `API team ${i}`), created],
        ] as const) {
          const rows = teams.filter((team) => names.includes(team.name));
          assert.equal(rows.length, names.length, 'one row per team created');
          assert.deepEqual(rows.map((team) => team.id).sort(), [...ids].sort(), 'the ids the creators were given');
          for (const row of rows)
            assert.equal(owners.filter((owner) => owner.team_id === row.id).length, 1, `${row.name} has its owner`);
        }
        const names = await db
          .selectFrom('users')
          .select(['id', 'first_name'])
          .where(
            'id',
            'in',
            members.map((member) => member.id),
          )
          .execute();
        assert.deepEqual(
          new Map(names.map((row) => [row.id, row.first_name])),
          new Map(members.map((member, i) => [member.id, `Name ${i}`])),
          'every profile update stuck',
        );
        const subscriptionIds = apiResults
          .filter((result) => result.what.startsWith('subscription'))
          .map((result) => result.body.id!);
        const subscriptions = await db
          .selectFrom('webhook_subscriptions')
          .select(['id', 'team_id'])
          .where('team_id', 'in', sideTeamIds)
          .execute();
        assert.deepEqual(
          subscriptions.map((row) => row.id).sort(),
          [...subscriptionIds].sort(),
          'one row per subscription created',
        );

        // Each profile update is one event to the hub team; each reaches the receiver.
        const events = await db
          .selectFrom('events')
          .select('id')
          .where('type', '=', 'user.profile.updated')
          .where('team_id', '=', hubTeamId)
          .execute();
        assert.equal(events.length, PROFILE_UPDATES, 'one event per profile update');
        const received = () => new Set(receiver.received.map((entry) => JSON.parse(entry.body).id as string));
        await eventually(
          async () => events.every((event) => received().has(event.id)),
          30_000,
          'every event delivered',
        );
        // The receiver has an event a moment before the worker writes the attempt's result: wait for the
        // log to say success for every event.
        const succeeded = async () => {
          const rows = await db
            .selectFrom('webhook_deliveries')
            .select(['event_id', 'status'])
            .where('status', '=', 'success')
            .execute();
          return new Set(rows.map((row) => row.event_id));
        };
        await eventually(
          async () => {
            const done = await succeeded();
            return events.every((event) => done.has(event.id));
          },
          30_000,
          'every delivery logged as a success',
        );
        const successes = await db
          .selectFrom('webhook_deliveries')
          .select('event_id')
          .where('status', '=', 'success')
          .execute();
        assert.deepEqual(
          successes.map((row) => row.event_id).sort(),
          events.map((event) => event.id).sort(),
          'one successful delivery per event',
        );
        assert.equal(
          receiver.received.filter((entry) => entry.path !== '/hook').length,
          0,
          'nothing went to the side teams',
        );

        for (const process of [server, worker]) {
          assert.doesNotMatch(
            process.output(),
            /"level":(50|60)|database is busy|database is locked/,
            'no database error logged',
          );
        }
        assert.deepEqual(await stop(server), { code: 0, signal: null });
        assert.deepEqual(await stop(worker), { code: 0, signal: null });
      },
    );
  },
);
