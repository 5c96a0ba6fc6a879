// The invitation lifecycle through the API: create → e-mail (.eml) → accept → membership → events;
// replaced, revoked, expired, used and other-address links refused; validation changes nothing.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sendQueuedMail } from '../../src/mail/outbox.ts';
import { bearer, startApp, type TestApp } from '../support/app.ts';
import { readMailbox } from '../mail/eml.ts';
import { as, castTeam, count, events, makeCast, roleOf, tokenFromMail, type Cast } from './fixtures.ts';

describe('invitations', () => {
  let t: TestApp;
  let cast: Cast;
  let seq = 0;
  before(async () => {
    t = await startApp({ SERVICE_WEBHOOKS_ENABLED: 'true' });
    cast = await makeCast(t);
  });
  after(() => t.close());

  const invite = (teamId: string, payload: object, actor = cast.owner, headers: Record<string, string> = {}) =>
    t.inject({
      method: 'POST',
      url: `/api/v1/teams/${teamId}/invitations/`,
      headers: { ...as(actor), ...headers },
      payload,
    });
  const accept = (token: string, userToken: string) =>
    t.inject({ method: 'POST', url: '/api/v1/invitations/accept/', headers: bearer(userToken), payload: { token } });
  async function invitee(options: { verified?: boolean; email?: string } = {}) {
    const user = await t.user({
      email: options.email ?? `Invitee${++seq}@Example.org`,
      verified: options.verified ?? true,
    });
    return { ...user, token: await t.token(user.id, ['write:teams', 'read:teams']) };
  }

  it('create → e-mail → accept → membership, with the exact events', async () => {
    const teamId = await castTeam(t, cast);
    const bob = await invitee();
    const before = Date.now();
    const res = await invite(teamId, {
      email: `  ${bob.email.toUpperCase()} `,
      role: 'admin',
      message: 'Welcome aboard!\nSee you soon.',
    });
    assert.equal(res.statusCode, 201);
    const invitation = res.json();
    assert.deepEqual(Object.keys(invitation), [
      'id',
      'email',
      'role',
      'status',
      'invited_by',
      'created_at',
      'expires_at',
    ]);
    assert.equal(invitation.email, bob.email, 'normalised: trimmed and lower-cased');
    assert.equal(invitation.role, 'admin');
    assert.equal(invitation.status, 'pending');
    assert.equal(invitation.invited_by, cast.owner.id);
    const ttl = Date.parse(invitation.expires_at) - Date.parse(invitation.created_at);
    assert.equal(ttl, 7 * 24 * 3600 * 1000, 'seven days by default');
    assert.ok(Date.parse(invitation.created_at) >= before - 1000);

    const [created] = (await events(t, 'team.invitation.created')).filter(
      (e) => e.data.invitation_id === invitation.id,
    );
    assert.match(created.id, /^evt_[0-9a-f-]{36}$/);
    assert.equal(created.team_id, teamId);
    assert.equal(created.api_version, 'v1');
    assert.deepEqual(created.data, {
      invitation_id: invitation.id,
      email: bob.email,
      role: 'admin',
      invited_by: cast.owner.id,
      expires_at: invitation.expires_at,
    });

    const token = await tokenFromMail(t, bob.email);
    const mail = readMailbox(t.env.SERVICE_DATA_DIR).at(-1)!;
    assert.match(mail.headers.get('subject') ?? '', /invited you to join/);
    assert.match(mail.text, /> Welcome aboard!\n> See you soon\./);
    // Only the token's hash is stored.
    const stored = await t.ctx.db.kysely
      .selectFrom('invitations')
      .select('token_hash')
      .where('id', '=', invitation.id)
      .executeTakeFirstOrThrow();
    assert.notEqual(stored.token_hash, token);
    assert.equal(stored.token_hash.length, 64);

    const accepted = await accept(token, bob.token);
    assert.equal(accepted.statusCode, 200, accepted.body);
    assert.equal(accepted.json().id, teamId);
    assert.equal(accepted.json().role, 'admin');
    assert.equal(await roleOf(t, teamId, bob.id), 'admin');
    const added = (await events(t, 'team.member.added')).filter((e) => e.team_id === teamId);
    assert.equal(added.length, 1);
    assert.deepEqual(added[0].data, { user_id: bob.id, email: bob.email, role: 'admin' });

    // Single use: the same link again is refused and adds nothing.
    const again = await accept(token, bob.token);
    assert.equal(again.statusCode, 410);
    assert.equal(again.json().detail, 'This invitation has already been used.');
    const list = await t.inject({ url: `/api/v1/teams/${teamId}/invitations/`, headers: as(cast.owner) });
    assert.equal(list.json().count, 0, 'an accepted invitation is no longer listed');
  });

  it('a pending invitation for the same address is replaced: the old link is dead, the new one works', async () => {
    const teamId = await castTeam(t, cast);
    const carol = await invitee();
    const first = await invite(teamId, { email: carol.email, role: 'member' });
    const oldToken = await tokenFromMail(t, carol.email);
    const second = await invite(teamId, { email: carol.email, role: 'admin' }, cast.owner);
    assert.equal(second.statusCode, 201);
    assert.notEqual(second.json().id, first.json().id);
    const newToken = await tokenFromMail(t, carol.email);
    assert.notEqual(newToken, oldToken);
    const list = await t.inject({ url: `/api/v1/teams/${teamId}/invitations/`, headers: as(cast.admin) });
    assert.equal(list.json().count, 1);
    assert.equal(list.json().results[0].id, second.json().id);
    const old = await accept(oldToken, carol.token);
    assert.equal(old.statusCode, 410);
    assert.match(old.json().detail, /replaced by a newer one/);
    assert.equal(await roleOf(t, teamId, carol.id), undefined);
    assert.equal((await accept(newToken, carol.token)).statusCode, 200);
    assert.equal(await roleOf(t, teamId, carol.id), 'admin');
  });

  it('concurrent invitations to one address leave exactly one pending invitation', async () => {
    const teamId = await castTeam(t, cast);
    const results = await Promise.all(
      [1, 2, 3].map(() => invite(teamId, { email: 'race@example.org', role: 'member' })),
    );
    assert.deepEqual(
      results.map((r) => r.statusCode),
      [201, 201, 201],
    );
    const pending = await t.ctx.db.kysely
      .selectFrom('invitations')
      .select('id')
      .where('team_id', '=', teamId)
      .where('status', '=', 'pending')
      .execute();
    assert.equal(pending.length, 1);
  });

  it('a revoked link is refused; revoking twice is 404', async () => {
    const teamId = await castTeam(t, cast);
    const dave = await invitee();
    const created = await invite(teamId, { email: dave.email, role: 'member' }, cast.admin);
    const token = await tokenFromMail(t, dave.email);
    const revoked = await t.inject({
      method: 'DELETE',
      url: `/api/v1/teams/${teamId}/invitations/${created.json().id}/`,
      headers: as(cast.admin),
    });
    assert.equal(revoked.statusCode, 204);
    const res = await accept(token, dave.token);
    assert.equal(res.statusCode, 410);
    assert.equal(res.json().detail, 'This invitation was revoked by the team.');
    assert.equal(await roleOf(t, teamId, dave.id), undefined);
    const twice = await t.inject({
      method: 'DELETE',
      url: `/api/v1/teams/${teamId}/invitations/${created.json().id}/`,
      headers: as(cast.admin),
    });
    assert.equal(twice.statusCode, 404);
    // Another team's invitation id is a 404 too, and stays pending.
    const otherTeam = await castTeam(t, cast);
    const other = await invite(otherTeam, { email: 'other@example.org', role: 'member' });
    const cross = await t.inject({
      method: 'DELETE',
      url: `/api/v1/teams/${teamId}/invitations/${other.json().id}/`,
      headers: as(cast.owner),
    });
    assert.equal(cross.statusCode, 404);
    const list = await t.inject({ url: `/api/v1/teams/${otherTeam}/invitations/`, headers: as(cast.owner) });
    assert.equal(list.json().count, 1);
  });

  it('another address, an unverified address, a garbage token: refused, no membership', async () => {
    const teamId = await castTeam(t, cast);
    const erin = await invitee({ verified: false });
    await invite(teamId, { email: erin.email, role: 'member' });
    const token = await tokenFromMail(t, erin.email);
    const stranger = await invitee();
    const wrong = await accept(token, stranger.token);
    assert.equal(wrong.statusCode, 403);
    assert.match(wrong.json().detail, /different e-mail address/);
    const unverified = await accept(token, erin.token);
    assert.equal(unverified.statusCode, 403);
    assert.match(unverified.json().detail, /Verify your e-mail address/);
    for (const bad of ['nope', 'A'.repeat(43)]) {
      const res = await accept(bad, stranger.token);
      assert.equal(res.statusCode, 404);
      assert.equal(res.json().detail, 'This invitation link is not valid.');
    }
    assert.equal(await roleOf(t, teamId, erin.id), undefined);
    assert.equal(await roleOf(t, teamId, stranger.id), undefined);
    const unauthenticated = await t.inject({ method: 'POST', url: '/api/v1/invitations/accept/', payload: { token } });
    assert.equal(unauthenticated.statusCode, 401);
    // Still pending: the right person can still accept once verified.
    await t.ctx.db.kysely
      .updateTable('users')
      .set({ email_verified_at: new Date().toISOString() })
      .where('id', '=', erin.id)
      .execute();
    assert.equal((await accept(token, erin.token)).statusCode, 200);
  });

  it('inviting a member is 409; bad input is 400; neither writes an invitation, e-mail or event', async () => {
    const teamId = await castTeam(t, cast);
    const state = async () => [await count(t, 'invitations'), await count(t, 'mail_outbox'), await count(t, 'events')];
    const before = await state();
    const member = await invite(teamId, { email: cast.member.email.toUpperCase(), role: 'member' });
    assert.equal(member.statusCode, 409);
    assert.equal(member.json().detail, `${cast.member.email} is already a member of this team.`);
    const owner = await invite(teamId, { email: 'x@example.org', role: 'owner' });
    assert.equal(owner.statusCode, 400);
    assert.deepEqual(
      owner.json().errors.map((e: { field: string }) => e.field),
      ['role'],
    );
    assert.match(owner.json().errors[0].message, /owner role cannot be given by invitation/);
    for (const [payload, field] of [
      [{ email: 'not-an-address', role: 'member' }, 'email'],
      [{ email: 'x@example.org' }, 'role'],
      [{ email: 'x@example.org', role: 'member', message: 'Claim your prize at https://evil.example' }, 'message'],
      [{ email: 'x@example.org', role: 'member', message: 'see www.evil.test' }, 'message'],
      [{ email: 'x@example.org', role: 'member', message: 'm'.repeat(501) }, 'message'],
      [{ email: 'x@example.org', role: 'member', team_id: teamId }, 'team_id'],
    ] as const) {
      const res = await invite(teamId, payload);
      assert.equal(res.statusCode, 400, JSON.stringify(payload));
      assert.equal(res.json().errors[0].field, field, JSON.stringify(payload));
    }
    assert.deepEqual(await state(), before);
  });

  it('Idempotency-Key: a replay returns the first answer and creates no second invitation, e-mail or event', async () => {
    const teamId = await castTeam(t, cast);
    const state = async () => [await count(t, 'invitations'), await count(t, 'mail_outbox'), await count(t, 'events')];
    const payload = { email: 'idem@example.org', role: 'member' };
    const key = { 'idempotency-key': `invite-${teamId}` };
    const first = await invite(teamId, payload, cast.owner, key);
    assert.equal(first.statusCode, 201);
    assert.equal(first.headers['idempotency-replay'], undefined);
    const after = await state();
    const replay = await invite(teamId, payload, cast.owner, key);
    assert.equal(replay.statusCode, 201);
    assert.equal(replay.headers['idempotency-replay'], 'true');
    assert.deepEqual(replay.json(), first.json());
    assert.deepEqual(await state(), after, 'no second invitation, e-mail or event');
    await sendQueuedMail(t.ctx);
    assert.equal(
      readMailbox(t.env.SERVICE_DATA_DIR).filter((m) => m.headers.get('to')?.includes('idem@example.org')).length,
      1,
    );
    // The same key with another body is 409 and writes nothing.
    const other = await invite(teamId, { ...payload, role: 'admin' }, cast.owner, key);
    assert.equal(other.statusCode, 409);
    assert.deepEqual(await state(), after);
    // A refusal (member → 403) is not an invitation either way; an invalid key is 400.
    const badKey = await invite(teamId, payload, cast.owner, { 'idempotency-key': 'has space' });
    assert.equal(badKey.statusCode, 400);
    // Without a key, the same request is a new invitation that replaces the first.
    const fresh = await invite(teamId, payload);
    assert.equal(fresh.statusCode, 201);
    assert.notEqual(fresh.json().id, first.json().id);
  });

  it('an expired link is refused and listed as expired', async () => {
    const short = await startApp({ SERVICE_WEBHOOKS_ENABLED: 'true', SERVICE_INVITATION_TTL_SECONDS: '1' });
    try {
      const owner = await short.user();
      const ownerToken = await short.token(owner.id, ['write:teams', 'read:teams']);
      const team = await short.team(owner.id);
      const frank = await short.user({ email: 'frank@example.org' });
      const frankToken = await short.token(frank.id, ['write:teams']);
      const created = await short.inject({
        method: 'POST',
        url: `/api/v1/teams/${team.id}/invitations/`,
        headers: bearer(ownerToken),
        payload: { email: frank.email, role: 'member' },
      });
      assert.equal(Date.parse(created.json().expires_at) - Date.parse(created.json().created_at), 1000);
      const token = await tokenFromMail(short, frank.email);
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const res = await short.inject({
        method: 'POST',
        url: '/api/v1/invitations/accept/',
        headers: bearer(frankToken),
        payload: { token },
      });
      assert.equal(res.statusCode, 410);
      assert.equal(res.json().detail, 'This invitation has expired; ask the team for a new one.');
      assert.equal(await roleOf(short, team.id, frank.id), undefined);
      const list = await short.inject({ url: `/api/v1/teams/${team.id}/invitations/`, headers: bearer(ownerToken) });
      assert.equal(list.json().results[0].status, 'expired');
    } finally {
      await short.close();
    }
  });

  it('with webhooks off, the lifecycle works and writes no event', async () => {
    const quiet = await startApp();
    try {
      const owner = await quiet.user();
      const ownerToken = await quiet.token(owner.id, []);
      const team = await quiet.team(owner.id);
      const gina = await quiet.user({ email: 'gina@example.org' });
      const res = await quiet.inject({
        method: 'POST',
        url: `/api/v1/teams/${team.id}/invitations/`,
        headers: bearer(ownerToken),
        payload: { email: gina.email, role: 'member' },
      });
      assert.equal(res.statusCode, 201);
      const token = await tokenFromMail(quiet, gina.email);
      const accepted = await quiet.inject({
        method: 'POST',
        url: '/api/v1/invitations/accept/',
        headers: bearer(await quiet.token(gina.id, [])),
        payload: { token },
      });
      assert.equal(accepted.statusCode, 200);
      assert.equal(await count(quiet, 'events'), 0);
    } finally {
      await quiet.close();
    }
  });
});
