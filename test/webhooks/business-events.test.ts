// Events raised by the other capabilities' real endpoints reach subscribed receivers.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bearer } from '../support/app.ts';
import { verifyWebhookSignature } from '../../src/webhooks/verify.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { webhookFixture, type WebhookFixture } from './setup.ts';

describe('events from the API', () => {
  let f: WebhookFixture;
  let r: Receiver;
  before(async () => {
    f = await webhookFixture();
    r = await startReceiver();
    await f.startWorker();
  });
  after(async () => {
    await f.close();
    await r.close();
  });

  it("POST invitations → team.invitation.created; PATCH /me/ → user.profile.updated to each of the user's teams", async () => {
    const sub = await f.createSubscription(r.url, ['team.invitation.created', 'user.profile.updated']);
    const secondTeam = (await f.t.team(f.owner.id)).id;
    const sub2 = await f.createSubscription(r.url, ['user.profile.updated'], secondTeam);
    const token = await f.t.token(f.owner.id, ['write:teams', 'write:profile']);
    const invite = await f.t.inject({
      method: 'POST',
      url: `/api/v1/teams/${f.teamId}/invitations/`,
      headers: bearer(token),
      payload: { email: 'invitee@example.com', role: 'member' },
    });
    assert.equal(invite.statusCode, 201, invite.body);
    const [got] = await r.waitFor(1);
    const event = JSON.parse(got.body);
    assert.equal(event.type, 'team.invitation.created');
    assert.equal(event.team_id, f.teamId);
    assert.equal(event.data.email, 'invitee@example.com');
    assert.equal(event.data.role, 'member');
    assert.equal(verifyWebhookSignature(sub.secret, String(got.headers['x-service-signature']), got.body), true);

    const patch = await f.t.inject({
      method: 'PATCH',
      url: '/api/v1/me/',
      headers: bearer(token),
      payload: { first_name: 'Grace' },
    });
    assert.equal(patch.statusCode, 200, patch.body);
    const all = await r.waitFor(3);
    const profile = all.slice(1).map((g) => JSON.parse(g.body));
    assert.deepEqual(
      profile.map((e) => e.type),
      ['user.profile.updated', 'user.profile.updated'],
    );
    assert.deepEqual(new Set(profile.map((e) => e.team_id)), new Set([f.teamId, secondTeam]));
    for (const e of profile) assert.equal(e.data.user_id, f.owner.id);
    const secretOf = new Map([
      [f.teamId, sub.secret],
      [secondTeam, sub2.secret],
    ]);
    for (const g of all.slice(1))
      assert.equal(
        verifyWebhookSignature(
          secretOf.get(JSON.parse(g.body).team_id)!,
          String(g.headers['x-service-signature']),
          g.body,
        ),
        true,
      );
  });
});
