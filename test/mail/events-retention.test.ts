// The retention of mail-provider events: stored through the real intake (signed notifications from the
// SNS stand-in), purged by the worker's task once older than SERVICE_MAIL_EVENTS_RETENTION_DAYS. The
// suppressions they caused stay, and a redelivery of a purged notification cannot suppress again.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mailEventsPurgeTask, purgeMailEvents } from '../../src/mail/events-purge.ts';
import { startWorker } from '../../src/worker/worker.ts';
import { WORKER_TASKS } from '../../src/worker-tasks.ts';
import { activeSuppressions, events, pki, post, t, useIntakeApp } from './intake-harness.ts';
import { fixture, notification } from './sns-stand-in.ts';

const DAY_MS = 86_400_000;

describe('mail-provider events: retention', () => {
  useIntakeApp();

  const suppressionRows = async () =>
    (await t.ctx.db.kysely.selectFrom('mail_suppressions').select(['email', 'event_key']).orderBy('id').execute()).map(
      (row) => ({ ...row }),
    );

  it('keeps events for the retention (90 days by default), then deletes them and keeps the suppressions', async () => {
    assert.equal(t.ctx.config.mailEventsRetentionDays, 90);
    const bounce = notification(fixture('bounce-permanent-with-dsn.json'), pki.signing.privateKey);
    assert.equal((await post(bounce)).statusCode, 200);
    assert.equal((await post(notification(fixture('delivery.json'), pki.signing.privateKey))).statusCode, 200);
    assert.equal((await events()).length, 2);

    const db = t.ctx.db.kysely;
    assert.equal(await purgeMailEvents(db, 90, Date.now() + 89 * DAY_MS), 0, '89 days on: both kept');
    assert.equal((await events()).length, 2);
    assert.equal(await purgeMailEvents(db, 90, Date.now() + 91 * DAY_MS), 2, '91 days on: both deleted');
    assert.deepEqual(await events(), []);
    assert.deepEqual(await suppressionRows(), [{ email: 'jane@example.com', event_key: bounce.MessageId }]);

    // The same notification again (SNS redelivers within an hour; here after the purge): stored as new,
    // and the address, already suppressed, gets no second suppression.
    const again = await post(bounce);
    assert.equal(again.statusCode, 200);
    const [row] = await events();
    assert.equal(row.event_key, bounce.MessageId);
    assert.equal(row.suppressed, 0);
    assert.deepEqual(await suppressionRows(), [{ email: 'jane@example.com', event_key: bounce.MessageId }]);
    assert.deepEqual(await activeSuppressions(), ['jane@example.com']);
  });

  it("the worker's mail-events-purge task deletes what is older than the retention on its first round", async () => {
    assert.ok(WORKER_TASKS.includes(mailEventsPurgeTask));
    assert.equal((await post(notification(fixture('delivery.json'), pki.signing.privateKey))).statusCode, 200);
    const fresh = notification(fixture('complaint-no-feedback-report.json'), pki.signing.privateKey);
    assert.equal((await post(fresh)).statusCode, 200);
    const db = t.ctx.db.kysely;
    const longAgo = new Date(Date.now() - 91 * DAY_MS).toISOString();
    await db
      .updateTable('mail_events')
      .set({ received_at: longAgo })
      .where('event_key', '<>', fresh.MessageId)
      .execute();
    const worker = startWorker(t.ctx, [mailEventsPurgeTask]);
    try {
      const started = Date.now();
      while ((await events()).length > 1) {
        assert.ok(Date.now() - started < 5000, 'the task purged the old event');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    } finally {
      await worker.stop();
    }
    assert.deepEqual(
      (await events()).map((e) => e.event_key),
      [fresh.MessageId],
    );
  });
});
