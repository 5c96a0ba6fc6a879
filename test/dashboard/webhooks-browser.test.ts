// The webhook pages in headless Chromium: a webhook created from its team's page, its secret shown
// once with a copy button, a test event sent to a local HTTPS receiver (signed with that secret)
// and seen in the delivery log and the 24-hour chart, a failing delivery retried (its waiting next
// attempt made due, then the dead letter restarted), the log filtered by status, the secret rotated
// and the webhook deleted after re-authentication; who may see what; and the forms without
// JavaScript.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { verifyWebhookSignature } from '../../src/webhooks/verify.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { webhookFixture, type WebhookFixture } from '../webhooks/setup.ts';
import {
  NO_CHROMIUM,
  errorOf,
  inspect,
  launch,
  logIn,
  noticeOf,
  person,
  reportScreenshots,
  submit,
} from './browser.ts';
import { EVENT_TYPES, type EventType } from '../../src/events/index.ts';
import { freePort } from '../support/net.ts';

describe('webhook pages in Chromium', { skip: NO_CHROMIUM }, () => {
  let f: WebhookFixture;
  let base: string;
  let receiver: Receiver;
  let browser: Browser;
  before(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    // Two attempts per cycle, the second an hour after the first: a failed entry waits, so its
    // "Retry" is what makes it go now. Two failures in a row disable a webhook.
    f = await webhookFixture({
      BASE_URL: base,
      SERVICE_WEBHOOKS_MAX_RETRIES: '2',
      SERVICE_WEBHOOKS_RETRY_DELAYS: '0,3600',
      SERVICE_WEBHOOKS_AUTO_DISABLE_AFTER: '2',
    });
    await f.t.app.listen({ port, host: '127.0.0.1' });
    await f.startWorker();
    receiver = await startReceiver();
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
    await receiver?.close();
    await f?.close();
    reportScreenshots(import.meta.filename);
  });

  const teamUrl = () => `${base}/teams/${f.teamId}/`;
  const logRows = (page: Page, status?: string) =>
    page.locator(`#deliveries tbody tr${status ? `[data-status="${status}"]` : ''}`);

  /** Waits until the subscription's log has `count` rows of `status`, then reloads the page. */
  async function logReaches(page: Page, subscriptionId: string, status: string, count: number) {
    const deadline = Date.now() + 20_000;
    while ((await f.deliveries(subscriptionId)).filter((d) => d.status === status).length < count) {
      assert.ok(
        Date.now() < deadline,
        `the log never had ${count} ${status} entries: ${JSON.stringify(await f.deliveries(subscriptionId))}`,
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await page.reload();
  }

  async function expireReauth() {
    await f.t.ctx.db.kysely
      .updateTable('sessions')
      .set({ reauth_at: new Date(Date.now() - 3600_000).toISOString() })
      .execute();
  }

  it('create, secret once, test event to an HTTPS receiver, log, retries, filter, chart, rotate, edit, delete', async () => {
    const { page } = await person(browser);
    await page.goto(teamUrl());
    await logIn(page, base, f.owner.email);
    await submit(page, page.getByRole('link', { name: 'Webhooks' }));
    await inspect(page, 'webhooks-empty');

    // Create: URL and one event type.
    await page.getByLabel('URL').fill(receiver.url);
    await page.getByLabel('team.member.added').check();
    await submit(page, page.getByRole('button', { name: 'Create webhook' }));
    const webhookUrl = page.url();
    const id = webhookUrl.split('/').at(-2)!;
    const secret = (await page.locator('#webhook-secret').textContent())!.trim();
    assert.match(secret, /^[A-Za-z0-9+/]{43}=$/);
    assert.match((await page.locator('main .notice').textContent()) ?? '', /it will not be shown again/);
    assert.equal(
      await page.getByRole('button', { name: 'Copy' }).isVisible(),
      true,
      'the copy button, where the clipboard is available',
    );
    await inspect(page, 'webhook-secret');
    await page.reload();
    assert.equal(await page.locator('#webhook-secret').count(), 0, 'shown once');
    await page.goto(`${teamUrl()}webhooks/`);
    assert.match((await page.locator('#webhooks tbody tr').textContent()) ?? '', /team\.member\.added\s*active/);
    await inspect(page, 'webhooks');
    await submit(page, page.getByRole('link', { name: receiver.url }));

    // A test event: a real, signed delivery that the receiver gets and the log shows.
    await submit(page, page.getByRole('button', { name: 'Send test event' }));
    assert.match((await noticeOf(page)) ?? '', /A test team\.member\.added event \(evt_[0-9a-f-]+\) is on its way/);
    const [delivery] = await receiver.waitFor(1);
    const body = JSON.parse(delivery.body);
    assert.equal(body.type, 'team.member.added');
    assert.deepEqual(body.data, { ...EVENT_TYPES[body.type as EventType].example, test: true });
    assert.ok(
      verifyWebhookSignature(secret, delivery.headers['x-service-signature'] as string, delivery.body),
      'signed with the secret the page showed',
    );
    await logReaches(page, id, 'success', 1);
    const cells = (await logRows(page, 'success').locator('td').allTextContents()).map((text) => text.trim());
    assert.match(cells[0], /^\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC$/);
    assert.deepEqual([cells[1], cells[2], cells[3], cells[5]], ['team.member.added', '1', '200', 'success']);
    assert.match(cells[4], /^\d+ ms$/);

    // A failing endpoint: attempt 1 fails, attempt 2 waits an hour; "Retry" sends it now.
    receiver.answer = () => ({ status: 500, body: 'down' });
    await submit(page, page.getByRole('button', { name: 'Send test event' }));
    await logReaches(page, id, 'failed', 1);
    assert.equal(await logRows(page, 'failed').getByRole('button', { name: 'Retry' }).count(), 1);
    assert.match((await logRows(page, 'pending').textContent()) ?? '', /due /);
    await submit(page, logRows(page, 'failed').getByRole('button', { name: 'Retry' }));
    assert.equal(await noticeOf(page), 'The next attempt is being made now instead of after its wait.');
    // Attempt 2 fails too, and is the last: a dead letter. The second failure in a row disabled
    // the webhook, and the page says why; a retry waits for it to be enabled.
    await logReaches(page, id, 'dead_letter', 1);
    assert.equal(
      await logRows(page, 'failed').getByRole('button', { name: 'Retry' }).count(),
      0,
      'nothing waits after the failed entry now',
    );
    assert.match(
      (await page.locator('#webhook-status').textContent()) ?? '',
      /disabled since .* UTC: Disabled automatically after 2 consecutive failed delivery attempts\./,
    );
    assert.equal(await page.getByRole('button', { name: 'Send test event' }).count(), 0);
    await inspect(page, 'webhook-disabled');
    assert.equal(await submit(page, logRows(page, 'dead_letter').getByRole('button', { name: 'Retry' })), 409);
    assert.equal(await errorOf(page), 'The subscription is inactive; re-enable it before retrying.');
    // Fixed and enabled again, the dead letter's "Retry" delivers it.
    receiver.answer = () => ({});
    await submit(page, page.getByRole('button', { name: 'Enable' }));
    await submit(page, logRows(page, 'dead_letter').getByRole('button', { name: 'Retry' }));
    assert.equal(await noticeOf(page), 'The event is being delivered again, from attempt 1.');
    await logReaches(page, id, 'success', 2);
    const failedEvent = JSON.parse(receiver.received[1].body).id;
    assert.deepEqual(
      receiver.received.slice(1).map((r) => JSON.parse(r.body).id),
      [failedEvent, failedEvent, failedEvent],
      'the same event, three times',
    );
    assert.equal(
      await logRows(page, 'dead_letter').getByRole('button', { name: 'Retry' }).count(),
      0,
      'a retried dead letter cannot start a second cycle',
    );

    // The chart counts the last 24 hours by outcome, and says so in words.
    const counted = async (outcome: string) =>
      (
        await page
          .locator(`svg.chart rect[data-outcome="${outcome}"]`)
          .evaluateAll((rects) => rects.map((r) => Number(r.getAttribute('data-count'))))
      ).reduce((a, b) => a + b, 0);
    assert.deepEqual([await counted('success'), await counted('failed'), await counted('dead_letter')], [2, 1, 1]);
    assert.match(
      (await page.locator('figure.chart figcaption').textContent()) ?? '',
      /Last 24 hours: 2 delivered, 1 failed, 1 dead letter\./,
    );
    await inspect(page, 'webhook-log');

    // The filter shows one status.
    await page.getByLabel('Status').selectOption('dead_letter');
    await submit(page, page.getByRole('button', { name: 'Filter' }));
    assert.match(page.url(), /\?status=dead_letter$/);
    assert.deepEqual(await logRows(page).evaluateAll((rows) => rows.map((r) => r.getAttribute('data-status'))), [
      'dead_letter',
    ]);
    assert.equal((await page.goto(`${webhookUrl}?status=bogus`))?.status(), 400);
    await page.goto(webhookUrl);

    // Rotation needs a recent re-authentication: the page sends the person to confirm, then back.
    await expireReauth();
    await submit(page, page.getByRole('button', { name: 'Rotate secret' }));
    assert.match(page.url(), /\/accounts\/reauthenticate\/\?next=/);
    await page.getByLabel('Password').fill('correct horse battery staple');
    await submit(page, page.getByRole('button', { name: 'Confirm' }));
    assert.equal(page.url(), webhookUrl);
    await submit(page, page.getByRole('button', { name: 'Rotate secret' }));
    const rotated = (await page.locator('#webhook-secret').textContent())!.trim();
    assert.notEqual(rotated, secret);
    assert.match((await page.locator('main .notice').textContent()) ?? '', /old secret too/);

    // Edit: all events; disable and enable.
    await page.getByLabel('All events').check();
    await submit(page, page.getByRole('button', { name: 'Save' }));
    assert.equal(await noticeOf(page), 'The webhook has been saved.');
    assert.match((await page.textContent('main')) ?? '', /Events all events/);
    await submit(page, page.getByRole('button', { name: 'Disable' }));
    assert.match((await page.locator('#webhook-status').textContent()) ?? '', /disabled/);
    assert.equal(await page.getByRole('button', { name: 'Send test event' }).count(), 0);
    await submit(page, page.getByRole('button', { name: 'Enable' }));
    assert.match((await page.locator('#webhook-status').textContent()) ?? '', /active/);

    // A URL the guard refuses is shown on the page and changes nothing.
    await page.getByLabel('URL').fill('http://hooks.example.com/plain-http');
    assert.equal(await submit(page, page.getByRole('button', { name: 'Save' })), 400);
    assert.match((await errorOf(page)) ?? '', /url is refused/);

    // Delete, after re-authenticating again.
    await expireReauth();
    await submit(page, page.getByRole('button', { name: 'Delete' }));
    assert.match(page.url(), /\/accounts\/reauthenticate\//);
    await page.getByLabel('Password').fill('correct horse battery staple');
    await submit(page, page.getByRole('button', { name: 'Confirm' }));
    await submit(page, page.getByRole('button', { name: 'Delete' }));
    assert.equal(new URL(page.url()).pathname, `/teams/${f.teamId}/webhooks/`);
    assert.match((await noticeOf(page)) ?? '', /has been deleted/);
    assert.deepEqual(await f.deliveries(id), []);
    assert.equal((await page.goto(webhookUrl))?.status(), 404);
  });

  it('a member gets the 403 page, a non-member the 404 page', async () => {
    const member = await f.t.user();
    const outsider = await f.t.user();
    await f.t.member(f.teamId, member.id, 'member');
    const sub = await f.createSubscription(receiver.url);
    for (const [who, status, text] of [
      [member, 403, /Only owners and admins of the team can manage its webhooks\./],
      [outsider, 404, /No team of yours/],
    ] as const) {
      const { page, context } = await person(browser);
      await page.goto(`${base}/accounts/login/`);
      await logIn(page, base, who.email);
      for (const path of ['webhooks/', `webhooks/${sub.id}/`]) {
        const response = await page.goto(`${teamUrl()}${path}`);
        assert.equal(response?.status(), status, path);
        assert.match((await page.textContent('main')) ?? '', text);
      }
      await context.close();
    }
  });

  it('without JavaScript: create a webhook, read its secret, send a test event', async () => {
    const { page, context } = await person(browser, { javaScript: false });
    await page.goto(`${teamUrl()}webhooks/`);
    await logIn(page, base, f.owner.email);
    await page.getByLabel('URL').fill(receiver.url);
    await page.getByLabel('All events').check();
    await submit(page, page.getByRole('button', { name: 'Create webhook' }));
    assert.match((await page.locator('#webhook-secret').textContent()) ?? '', /^[A-Za-z0-9+/]{43}=$/);
    assert.equal(
      await page.getByRole('button', { name: 'Copy' }).isVisible(),
      false,
      'no copy button without a script',
    );
    const before = receiver.received.length;
    await submit(page, page.getByRole('button', { name: 'Send test event' }));
    await receiver.waitFor(before + 1);
    await context.close();
  });
});
