// A user's team list is ordered and counted from the team name and state that the database copies onto
// each membership (migration 0016). These tests change a team in every way a name or state changes and
// read the list a client reads; on PostgreSQL, a rename and a join that overlap in time end with the
// new name on the new membership, whichever commits first.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTeamActive } from '../../src/teams/teams.ts';
import { bearer, FIXTURE_ACTOR as ACTOR, startApp, type TestApp } from '../support/app.ts';

describe("a user's team list follows its teams' names and states", () => {
  let t: TestApp;
  before(async () => {
    t = await startApp();
  });
  after(() => t.close());

  async function listOf(token: string) {
    const res = await t.inject({ url: '/api/v1/teams/', headers: bearer(token) });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json<{ count: number; results: { id: string; name: string; slug: string; role: string }[] }>();
    return { count: body.count, names: body.results.map((team) => team.name), teams: body.results };
  }

  const copyOf = (teamId: string) =>
    t.ctx.db.kysely
      .selectFrom('memberships')
      .select(['team_name', 'team_active'])
      .where('team_id', '=', teamId)
      .execute()
      .then((rows) => rows.map((row) => ({ ...row }))); // node:sqlite's rows have no prototype

  it('a rename reorders the list of every member, and the page shows the new name', async () => {
    const owner = await t.user();
    const member = await t.user();
    const bravo = await t.team(owner.id, 'Bravo');
    await t.team(owner.id, 'Charlie');
    const delta = await t.team(owner.id, 'Delta');
    await t.member(delta.id, member.id, 'member');
    await t.member(bravo.id, member.id, 'admin');
    const ownerToken = await t.token(owner.id, ['read:teams', 'write:teams']);
    const memberToken = await t.token(member.id, ['read:teams']);
    assert.deepEqual((await listOf(ownerToken)).names, ['Bravo', 'Charlie', 'Delta']);

    const renamed = await t.inject({
      method: 'PATCH',
      url: `/api/v1/teams/${delta.id}/`,
      headers: bearer(ownerToken),
      payload: { name: 'Alpha' },
    });
    assert.equal(renamed.statusCode, 200, renamed.body);
    assert.deepEqual((await listOf(ownerToken)).names, ['Alpha', 'Bravo', 'Charlie']);
    const theirs = await listOf(memberToken);
    assert.deepEqual(
      theirs.teams.map((team) => [team.name, team.role]),
      [
        ['Alpha', 'member'],
        ['Bravo', 'admin'],
      ],
    );
    assert.deepEqual(await copyOf(delta.id), [
      { team_name: 'Alpha', team_active: 1 },
      { team_name: 'Alpha', team_active: 1 },
    ]);
    // A change of the slug alone fires no copy (the slug is read from the team): the list shows the new slug.
    const slugged = await t.inject({
      method: 'PATCH',
      url: `/api/v1/teams/${delta.id}/`,
      headers: bearer(ownerToken),
      payload: { slug: `alpha-${delta.id.slice(0, 8)}` },
    });
    assert.equal(slugged.statusCode, 200, slugged.body);
    const [first] = (await listOf(ownerToken)).teams;
    assert.equal(first.slug, `alpha-${delta.id.slice(0, 8)}`);
  });

  it('a deactivated team leaves the count and the list of all its members; reactivated, it returns', async () => {
    const owner = await t.user();
    const member = await t.user();
    const teams = [];
    for (const name of ['One', 'Three', 'Two']) {
      const team = await t.team(owner.id, name);
      await t.member(team.id, member.id, 'member');
      teams.push(team);
    }
    const token = await t.token(member.id, ['read:teams']);
    await setTeamActive(t.ctx.db.kysely, teams[1].id, false, ACTOR);
    assert.deepEqual(await listOf(token).then((l) => [l.count, l.names]), [2, ['One', 'Two']]);
    assert.deepEqual(
      (await copyOf(teams[1].id)).map((row) => row.team_active),
      [0, 0],
    );
    await setTeamActive(t.ctx.db.kysely, teams[1].id, true, ACTOR);
    assert.deepEqual(await listOf(token).then((l) => [l.count, l.names]), [3, ['One', 'Three', 'Two']]);
  });

  it('a membership written straight into its table (a restore, a script) takes its team name and state', async () => {
    const owner = await t.user();
    const joiner = await t.user();
    const team = await t.team(owner.id, 'Written directly');
    await setTeamActive(t.ctx.db.kysely, team.id, false, ACTOR);
    await t.ctx.db.kysely
      .insertInto('memberships')
      .values({ team_id: team.id, user_id: joiner.id, role: 'member', joined_at: new Date().toISOString() })
      .execute();
    const row = await t.ctx.db.kysely
      .selectFrom('memberships')
      .select(['team_name', 'team_active'])
      .where('team_id', '=', team.id)
      .where('user_id', '=', joiner.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual({ ...row }, { team_name: 'Written directly', team_active: 0 });
  });

  it('PostgreSQL: a join and a rename that overlap end with the new name, whichever commits first', async (ctx) => {
    const pool = t.ctx.db.pool;
    if (!pool) return ctx.skip('SQLite runs one write at a time: a join and a rename cannot overlap');
    const owner = await t.user();
    const joiners = [await t.user(), await t.user()];
    const team = await t.team(owner.id, 'Before');
    const [first, second] = [await pool.connect(), await pool.connect()];
    const join = (client: typeof first, userId: number) =>
      client.query(`insert into memberships (team_id, user_id, role, joined_at) values ($1, $2, 'member', $3)`, [
        team.id,
        userId,
        new Date().toISOString(),
      ]);
    const settled = async (promise: Promise<unknown>) =>
      Promise.race([promise.then(() => true), new Promise((resolve) => setTimeout(() => resolve(false), 150))]);
    try {
      // The rename is first and uncommitted: the join waits for it, then copies the new name.
      await first.query('begin');
      await first.query(`update teams set name = 'Middle' where id = $1`, [team.id]);
      const joining = join(second, joiners[0].id);
      assert.equal(await settled(joining), false, 'the join waits for the rename');
      await first.query('commit');
      await joining;
      // The join is first and uncommitted: the rename waits for it, then renames its row too.
      await first.query('begin');
      await join(first, joiners[1].id);
      const renaming = second.query(`update teams set name = 'After' where id = $1`, [team.id]);
      assert.equal(await settled(renaming), false, 'the rename waits for the join');
      await first.query('commit');
      await renaming;
    } finally {
      first.release();
      second.release();
    }
    assert.deepEqual(
      (await copyOf(team.id)).map((row) => row.team_name),
      ['After', 'After', 'After'],
    );
  });
});
