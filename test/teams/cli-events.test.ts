// `svc team add-member` is a join: it emits team.member.added in the transaction of the insert;
// `svc team create` emits nothing (the creator is not "someone else joining").
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { runCli } from '../../src/main.ts';
import { startApp, type TestApp } from '../support/app.ts';
import { events } from './fixtures.ts';

describe('svc team commands and events', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp({ SERVICE_WEBHOOKS_ENABLED: 'true' });
  });
  after(() => t.close());

  async function svc(...argv: string[]) {
    let stdout = '';
    let stderr = '';
    const code = await runCli(argv, t.env, {
      out: (text) => (stdout += text + '\n'),
      err: (text) => (stderr += text + '\n'),
    });
    return { code, stdout, stderr };
  }

  it('team create emits nothing; add-member emits team.member.added with the exact data; a repeat adds nothing', async () => {
    const owner = await t.user();
    const joiner = await t.user({ email: 'Joiner@Example.org' });
    const created = await svc('team', 'create', '--name', 'CLI Team', '--slug', 'cli-team', '--owner', owner.email);
    assert.equal(created.code, 0, created.stderr);
    const teamId = created.stdout.trim();
    assert.deepEqual(await events(t), []);

    const added = await svc(
      'team',
      'add-member',
      '--team',
      'cli-team',
      '--email',
      'JOINER@example.org',
      '--role',
      'admin',
    );
    assert.equal(added.code, 0, added.stderr);
    const emitted = await events(t);
    assert.equal(emitted.length, 1);
    assert.equal(emitted[0].type, 'team.member.added');
    assert.equal(emitted[0].team_id, teamId);
    assert.deepEqual(emitted[0].data, { user_id: joiner.id, email: 'joiner@example.org', role: 'admin' });

    const repeat = await svc('team', 'add-member', '--team', 'cli-team', '--email', joiner.email, '--role', 'member');
    assert.equal(repeat.code, 1);
    assert.match(repeat.stderr, /already a member/);
    assert.equal((await events(t)).length, 1);
  });
});
