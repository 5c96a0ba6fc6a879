// Webhook changes in the audit log: subscription created, updated, deleted, secret rotated, a dead
// letter retried (API and CLI), and the service disabling a failing subscription on its own. One
// entry each, none for a refused change or a change that changes nothing, and never a secret.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bearer } from '../support/app.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { webhookFixture, type WebhookFixture } from '../webhooks/setup.ts';
import { eventually } from '../support/wait.ts';
import { apiActor, auditReader, cliActorOf, oauthDoor, patDoor, shape, svc, type Door, type Entry } from './helpers.ts';

const HOOK = 'https://127.0.0.1:9/hook';

describe('audit entries of webhook changes', () => {
  let f: WebhookFixture;
  let r: Receiver;
  let reader: { token: string };
  let fresh: (teamId: string, reader: { token: string }) => Promise<Entry[]>;

  before(async () => {
    // One attempt per event; the third failure in a row disables the subscription.
    f = await webhookFixture({
      SERVICE_WEBHOOKS_MAX_RETRIES: '1',
      SERVICE_WEBHOOKS_AUTO_DISABLE_AFTER: '3',
      SERVICE_WEBHOOKS_CONCURRENCY: '1',
    });
    r = await startReceiver();
    r.answer = () => ({ status: 500 });
    reader = { token: await f.t.token(f.owner.id, ['read:teams']) };
    fresh = auditReader(f.t);
    await fresh(f.teamId, reader); // the fixture's own team.created
  });
  after(async () => {
    await f?.close();
    await r?.close();
  });

  const base = (rest = '') => `/api/v1/teams/${f.teamId}/webhooks/${rest}`;
  const call = async (door: Door, method: 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object, status = 0) => {
    const res = await f.t.inject({ method, url, headers: door.headers, payload });
    if (status) assert.equal(res.statusCode, status, `${method} ${url}: ${res.body}`);
    else assert.ok(res.statusCode < 300, `${method} ${url}: ${res.statusCode} ${res.body}`);
    return res.statusCode === 204 ? null : res.json();
  };

  for (const [name, makeDoor] of [
    ['a PAT', patDoor],
    ['an OAuth access token', oauthDoor],
  ] as const) {
    it(`through the API with ${name}: create, update, rotate, delete; refusals and no-op updates record nothing`, async () => {
      const door = await makeDoor(f.t, f.owner);
      const by = apiActor(f.owner, door);
      const created = await call(door, 'POST', base(), { url: HOOK, events: ['team.member.added'] });
      const sub = (rest = '') => base(`${created.id}/${rest}`);
      await call(door, 'PATCH', sub(), { events: ['*'] });
      await call(door, 'PATCH', sub(), { events: ['*'], url: HOOK }); // changes nothing
      await call(door, 'PATCH', sub(), { is_active: false });
      const rotated = await call(door, 'POST', sub('rotate-secret/'));
      await call(door, 'POST', base(), { url: 'http://insecure.example/hook', events: ['*'] }, 400);
      await call(door, 'PATCH', sub(), { events: ['no.such.event'] }, 400);
      await call(door, 'DELETE', sub());
      await call(door, 'DELETE', sub(), undefined, 404);

      const entries = await fresh(f.teamId, reader);
      const text = JSON.stringify(entries);
      assert.ok(!text.includes(created.secret) && !text.includes(rotated.secret), 'no entry holds a secret');
      const target = { type: 'webhook_subscription', id: created.id };
      assert.deepEqual(entries.map(shape), [
        { action: 'webhook.subscription.created', ...by, target, data: { url: HOOK, events: ['team.member.added'] } },
        {
          action: 'webhook.subscription.updated',
          ...by,
          target,
          data: { events: { before: ['team.member.added'], after: ['*'] } },
        },
        { action: 'webhook.subscription.updated', ...by, target, data: { is_active: { before: true, after: false } } },
        {
          action: 'webhook.secret_rotated',
          ...by,
          target,
          data: { previous_secret_expires_at: entries[3].data.previous_secret_expires_at },
        },
        { action: 'webhook.subscription.deleted', ...by, target, data: { url: HOOK, events: ['*'] } },
      ]);
      assert.match(String(entries[3].data.previous_secret_expires_at), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    });
  }

  it('a member cannot change a subscription, and that records nothing', async () => {
    const member = await f.t.user();
    await f.t.member(f.teamId, member.id, 'member');
    await fresh(f.teamId, reader); // the member's joining
    const door = await patDoor(f.t, member);
    await call(door, 'POST', base(), { url: HOOK, events: ['*'] }, 403);
    assert.deepEqual(await fresh(f.teamId, reader), []);
  });

  it('a retried dead letter (API and CLI) is one entry each; the service disabling the subscription is the system', async () => {
    const door = await patDoor(f.t, f.owner);
    const created = await call(door, 'POST', base(), { url: r.url, events: ['*'] });
    await f.emit('team.member.added', { user_id: 1, email: 'a@example.com', role: 'member' });
    await f.startWorker();
    const deadLetter = async (count: number) =>
      eventually(
        async () => {
          const rows = await f.deliveries(created.id);
          return rows.length === count && rows.every((row) => row.status === 'dead_letter') && rows.at(-1)!;
        },
        20_000,
        `${count} dead letters`,
      );
    const first = await deadLetter(1);
    await call(door, 'POST', base(`${created.id}/logs/${first.id}/retry/`), undefined, 202);
    await call(door, 'POST', base(`${created.id}/logs/${first.id}/retry/`), undefined, 409); // already retried
    const second = await deadLetter(2);
    await svc(f.t, 'webhooks', 'retry', '--subscription', created.id, '--log', String(second.id));
    const third = await deadLetter(3);
    const view: { is_active: boolean; disabled_reason: string } = await eventually(
      async () => {
        const res = await f.t.inject({ url: base(`${created.id}/`), headers: bearer(f.token) });
        return res.json().is_active === false ? res.json() : null;
      },
      20_000,
      'the subscription disabled',
    );
    assert.match(view.disabled_reason, /3 consecutive failed/);

    const eventId = first.event_id;
    const target = { type: 'webhook_subscription', id: created.id };
    const retried = (retryId: number) => ({
      subscription_id: created.id,
      event_id: eventId,
      event_type: 'team.member.added',
      retry_id: retryId,
    });
    assert.deepEqual((await fresh(f.teamId, reader)).map(shape), [
      {
        action: 'webhook.subscription.created',
        ...apiActor(f.owner, door),
        target,
        data: { url: r.url, events: ['*'] },
      },
      {
        action: 'webhook.delivery.retried',
        ...apiActor(f.owner, door),
        target: { type: 'webhook_delivery', id: String(first.id) },
        data: retried(second.id),
      },
      {
        action: 'webhook.delivery.retried',
        ...cliActorOf('webhooks retry'),
        target: { type: 'webhook_delivery', id: String(second.id) },
        data: retried(third.id),
      },
      {
        action: 'webhook.subscription.disabled',
        actor: { type: 'system', id: null, email: null },
        credential: null,
        context: { ip: null, user_agent: null, request_id: null },
        target,
        data: { is_active: { before: true, after: false }, reason: view.disabled_reason, consecutive_failures: 3 },
      },
    ]);
  });
});
