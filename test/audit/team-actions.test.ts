// Every change to a team records exactly one audit entry, with the actor, credential, context and
// target of whoever made it, whichever door it came through: the API with a PAT or an OAuth access
// token, the invitation page with a session, the operator CLI. A refused or failed change records
// nothing (an entry written before the refusal is rolled back with the change). Read back through
// the audit-log API, as a client sees it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { cli } from '../cli/cli-helpers.ts';
import { startApp, type TestApp } from '../support/app.ts';
import { as, makeCast, tokenFromMail, type Cast } from '../teams/fixtures.ts';
import {
  apiActor,
  auditReader,
  cliActorOf,
  oauthDoor,
  pageDoor,
  patDoor,
  shape,
  svc,
  type Door,
  type Entry,
  type Person,
} from './helpers.ts';

describe('audit entries of team changes', () => {
  let t: TestApp;
  let cast: Cast;
  let fresh: (teamId: string, reader: { token: string }) => Promise<Entry[]>;

  before(async () => {
    t = await startApp();
    cast = await makeCast(t);
    fresh = auditReader(t);
  });
  after(() => t?.close());

  const call = async (door: Door, method: 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) => {
    const res = await t.inject({ method, url: `/api/v1/${url}`, headers: door.headers, payload });
    assert.ok(res.statusCode < 300, `${method} ${url}: ${res.statusCode} ${res.body}`);
    return res.statusCode === 204 ? null : res.json();
  };

  for (const [name, makeDoor] of [
    ['a PAT', patDoor],
    ['an OAuth access token', oauthDoor],
  ] as const) {
    it(`through the API with ${name}: one entry per change, naming the caller and the credential`, async () => {
      const [owner, admin, member] = [cast.owner, cast.admin, cast.member];
      const door = new Map<Person, Door>();
      for (const person of [owner, admin, member]) door.set(person, await makeDoor(t, person));
      const by = (person: Person) => apiActor(person, door.get(person)!);

      const team = await call(door.get(owner)!, 'POST', 'teams/', { name: `Audited by ${name}` });
      await call(door.get(owner)!, 'PATCH', `teams/${team.id}/`, { name: 'Renamed', slug: team.slug });
      await call(door.get(owner)!, 'PATCH', `teams/${team.id}/`, { name: 'Renamed' }); // changes nothing
      const invitation = await call(door.get(owner)!, 'POST', `teams/${team.id}/invitations/`, {
        email: admin.email,
        role: 'admin',
      });
      await call(door.get(admin)!, 'POST', 'invitations/accept/', { token: await tokenFromMail(t, admin.email) });
      await call(door.get(owner)!, 'PATCH', `teams/${team.id}/members/${admin.id}/`, { role: 'member' });
      await call(door.get(owner)!, 'PATCH', `teams/${team.id}/members/${admin.id}/`, { role: 'member' }); // already a member
      const first = await call(door.get(owner)!, 'POST', `teams/${team.id}/invitations/`, {
        email: member.email,
        role: 'member',
      });
      const second = await call(door.get(owner)!, 'POST', `teams/${team.id}/invitations/`, {
        email: member.email,
        role: 'member',
      });
      await call(door.get(owner)!, 'DELETE', `teams/${team.id}/invitations/${second.id}/`);
      await svc(t, 'team', 'add-member', '--team', team.id, '--email', member.email, '--role', 'member');
      await call(door.get(member)!, 'DELETE', `teams/${team.id}/members/${member.id}/`);
      await call(door.get(owner)!, 'DELETE', `teams/${team.id}/members/${admin.id}/`);

      const entries = (await fresh(team.id, owner)).map(shape);
      const teamTarget = { type: 'team', id: team.id };
      const userTarget = (person: Person) => ({ type: 'user', id: String(person.id) });
      assert.deepEqual(entries, [
        {
          action: 'team.created',
          ...by(owner),
          target: teamTarget,
          data: { name: `Audited by ${name}`, slug: team.slug, owner_id: owner.id },
        },
        {
          action: 'team.updated',
          ...by(owner),
          target: teamTarget,
          data: { name: { before: `Audited by ${name}`, after: 'Renamed' } },
        },
        {
          action: 'team.invitation.created',
          ...by(owner),
          target: { type: 'invitation', id: invitation.id },
          data: { email: admin.email, role: 'admin', expires_at: invitation.expires_at, replaced: null },
        },
        {
          action: 'team.invitation.accepted',
          ...by(admin),
          target: { type: 'invitation', id: invitation.id },
          data: { email: admin.email, role: 'admin', user_id: admin.id },
        },
        {
          action: 'team.member.added',
          ...by(admin),
          target: userTarget(admin),
          data: { email: admin.email, role: 'admin' },
        },
        {
          action: 'team.member.role_changed',
          ...by(owner),
          target: userTarget(admin),
          data: { email: admin.email, role: { before: 'admin', after: 'member' } },
        },
        {
          action: 'team.invitation.created',
          ...by(owner),
          target: { type: 'invitation', id: first.id },
          data: { email: member.email, role: 'member', expires_at: first.expires_at, replaced: null },
        },
        {
          action: 'team.invitation.created',
          ...by(owner),
          target: { type: 'invitation', id: second.id },
          data: { email: member.email, role: 'member', expires_at: second.expires_at, replaced: first.id },
        },
        {
          action: 'team.invitation.revoked',
          ...by(owner),
          target: { type: 'invitation', id: second.id },
          data: { email: member.email, role: 'member' },
        },
        {
          action: 'team.member.added',
          ...cliActorOf('team add-member'),
          target: userTarget(member),
          data: { email: member.email, role: 'member' },
        },
        {
          action: 'team.member.left',
          ...by(member),
          target: userTarget(member),
          data: { email: member.email, role: 'member' },
        },
        {
          action: 'team.member.removed',
          ...by(owner),
          target: userTarget(admin),
          data: { email: admin.email, role: 'member' },
        },
      ]);
    });
  }

  it('through the invitation page: the session is the credential, the response its request id', async () => {
    const owner = cast.owner;
    const teamId = (
      await t.inject({ method: 'POST', url: '/api/v1/teams/', headers: as(owner), payload: { name: 'Page team' } })
    ).json().id;
    const lea = await t.user({ email: 'lea.audit@example.org' });
    const invited = await t.inject({
      method: 'POST',
      url: `/api/v1/teams/${teamId}/invitations/`,
      headers: as(owner),
      payload: { email: lea.email, role: 'member' },
    });
    const invitationId = invited.json().id;
    await fresh(teamId, owner); // created, invitation.created: through the API, seen above
    const { browser, credential } = await pageDoor(t, lea);
    const token = await tokenFromMail(t, lea.email);
    await browser.get(`/invitations/${token}/`);
    const accepted = await browser.post(`/invitations/${token}/`);
    assert.equal(accepted.statusCode, 200);
    const requestId = accepted.headers['x-request-id'];
    assert.match(String(requestId), /^[0-9a-f-]{36}$/);
    const by = {
      actor: { type: 'user', id: lea.id, email: lea.email },
      credential,
      context: { ip: '127.0.0.1', user_agent: 'lightMyRequest', request_id: requestId },
    };
    assert.deepEqual((await fresh(teamId, owner)).map(shape), [
      {
        action: 'team.invitation.accepted',
        ...by,
        target: { type: 'invitation', id: invitationId },
        data: { email: lea.email, role: 'member', user_id: lea.id },
      },
      {
        action: 'team.member.added',
        ...by,
        target: { type: 'user', id: String(lea.id) },
        data: { email: lea.email, role: 'member' },
      },
    ]);
  });

  it('through the operator CLI: the system, with the OS account as the credential', async () => {
    const { owner, admin } = cast;
    const teamId = (
      await svc(t, 'team', 'create', '--name', 'CLI audited', '--slug', 'cli-audited', '--owner', owner.email)
    ).trim();
    await svc(t, 'team', 'add-member', '--team', 'cli-audited', '--email', admin.email, '--role', 'admin');
    await svc(t, 'team', 'deactivate', '--team', 'cli-audited');
    await svc(t, 'team', 'deactivate', '--team', 'cli-audited'); // already inactive: no change
    await svc(t, 'team', 'activate', '--team', teamId);
    await svc(t, 'team', 'activate', '--team', teamId); // already active: no change
    const teamTarget = { type: 'team', id: teamId };
    assert.deepEqual((await fresh(teamId, owner)).map(shape), [
      {
        action: 'team.created',
        ...cliActorOf('team create'),
        target: teamTarget,
        data: { name: 'CLI audited', slug: 'cli-audited', owner_id: owner.id },
      },
      {
        action: 'team.member.added',
        ...cliActorOf('team add-member'),
        target: { type: 'user', id: String(admin.id) },
        data: { email: admin.email, role: 'admin' },
      },
      {
        action: 'team.deactivated',
        ...cliActorOf('team deactivate'),
        target: teamTarget,
        data: { is_active: { before: true, after: false } },
      },
      {
        action: 'team.reactivated',
        ...cliActorOf('team activate'),
        target: teamTarget,
        data: { is_active: { before: false, after: true } },
      },
    ]);
  });

  it('an Idempotency-Key replay records nothing more', async () => {
    const owner = cast.owner;
    const teamId = (
      await t.inject({ method: 'POST', url: '/api/v1/teams/', headers: as(owner), payload: { name: 'Replayed' } })
    ).json().id;
    await fresh(teamId, owner);
    const send = () =>
      t.inject({
        method: 'POST',
        url: `/api/v1/teams/${teamId}/invitations/`,
        headers: { ...as(owner), 'idempotency-key': 'audit-once' },
        payload: { email: 'once@example.org', role: 'member' },
      });
    const [first, replay] = [await send(), await send()];
    assert.equal(first.statusCode, 201);
    assert.equal(replay.headers['idempotency-replay'], 'true');
    assert.deepEqual(
      (await fresh(teamId, owner)).map((entry) => [entry.action, entry.target.id]),
      [['team.invitation.created', first.json().id]],
    );
  });

  it('a refused or failed change records nothing, even one refused after its entry was written', async () => {
    const { owner, admin, member, outsider } = cast;
    const teamId = (await svc(t, 'team', 'create', '--name', 'Refusals', '--owner', owner.email)).trim();
    await svc(t, 'team', 'add-member', '--team', teamId, '--email', admin.email, '--role', 'admin');
    await svc(t, 'team', 'add-member', '--team', teamId, '--email', member.email, '--role', 'member');
    const taken = (
      await t.inject({ method: 'POST', url: '/api/v1/teams/', headers: as(owner), payload: { name: 'Taken slug' } })
    ).json().slug;
    const mira = await t.user({ email: 'mira.audit@example.org' });
    const invited = await t.inject({
      method: 'POST',
      url: `/api/v1/teams/${teamId}/invitations/`,
      headers: as(owner),
      payload: { email: mira.email, role: 'member' },
    });
    assert.equal(invited.statusCode, 201);
    const token = await tokenFromMail(t, mira.email);
    await svc(t, 'team', 'add-member', '--team', teamId, '--email', mira.email, '--role', 'member');
    const before = await fresh(teamId, owner);
    assert.equal(before.length, 5);

    const refused: [string, { token: string }, 'POST' | 'PATCH' | 'DELETE', string, object | undefined, number][] = [
      ['a member renames the team', member, 'PATCH', `teams/${teamId}/`, { name: 'Mine' }, 403],
      ['an outsider renames the team', outsider, 'PATCH', `teams/${teamId}/`, { name: 'Mine' }, 404],
      ['a slug another team holds', owner, 'PATCH', `teams/${teamId}/`, { slug: taken }, 409],
      ['a name too long', owner, 'PATCH', `teams/${teamId}/`, { name: 'x'.repeat(101) }, 400],
      ['an admin demotes the owner', admin, 'PATCH', `teams/${teamId}/members/${owner.id}/`, { role: 'member' }, 403],
      [
        'the last owner demotes themself',
        owner,
        'PATCH',
        `teams/${teamId}/members/${owner.id}/`,
        { role: 'admin' },
        409,
      ],
      ['a member removes an admin', member, 'DELETE', `teams/${teamId}/members/${admin.id}/`, undefined, 403],
      ['the last owner leaves', owner, 'DELETE', `teams/${teamId}/members/${owner.id}/`, undefined, 409],
      [
        'an invitation for a member',
        owner,
        'POST',
        `teams/${teamId}/invitations/`,
        { email: member.email, role: 'member' },
        409,
      ],
      [
        'an admin invites an admin',
        admin,
        'POST',
        `teams/${teamId}/invitations/`,
        { email: 'new@example.org', role: 'admin' },
        403,
      ],
      [
        'revoking an unknown invitation',
        owner,
        'DELETE',
        `teams/${teamId}/invitations/00000000-0000-4000-8000-000000000000/`,
        undefined,
        404,
      ],
      ['accepting an invitation for another address', outsider, 'POST', 'invitations/accept/', { token }, 403],
    ];
    for (const [what, who, method, url, payload, status] of refused) {
      const res = await t.inject({ method, url: `/api/v1/${url}`, headers: as(who), payload });
      assert.equal(res.statusCode, status, `${what}: ${res.body}`);
    }
    // Mira joined through the CLI since her invitation was sent: accepting it now is refused (409)
    // after the acceptance's entry was written in the transaction, which rolls back with it.
    const miraToken = await t.token(mira.id, ['write:teams']);
    const late = await t.inject({
      method: 'POST',
      url: '/api/v1/invitations/accept/',
      headers: as({ token: miraToken }),
      payload: { token },
    });
    assert.equal(late.statusCode, 409, late.body);
    for (const argv of [
      ['team', 'add-member', '--team', teamId, '--email', member.email, '--role', 'admin'],
      ['team', 'create', '--name', 'Dup', '--slug', taken, '--owner', owner.email],
    ]) {
      assert.equal((await cli(t.env, argv)).code, 1, argv.join(' '));
    }
    assert.deepEqual(await fresh(teamId, owner), []);
    const count = await t.ctx.db.kysely
      .selectFrom('audit_entries')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('team_id', '=', teamId)
      .executeTakeFirstOrThrow();
    assert.equal(Number(count.n), 5, 'nothing was written for the refused changes');
  });
});
