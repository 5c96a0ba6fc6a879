// A sender claims the outbox 25 messages at a time, under a lease sized for one batch: a claim that took
// more would hold the rest of the queue from other workers, and past the lease send them twice. Each
// claimed batch gets one suppression read before it is sent (guard.ts), so the reads count the batches.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { queueMail, sendQueuedMail } from '../../src/mail/outbox.ts';
import { startApp, type TestApp } from '../support/app.ts';
import { captureStatements } from '../support/query-plans.ts';

describe('mail outbox claims', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp();
  });
  after(() => t?.close());

  it('60 queued messages go out in three claims of at most 25', async () => {
    await t.ctx.db.kysely.transaction().execute(async (trx) => {
      for (let i = 0; i < 60; i++)
        await queueMail(t.ctx, trx, { to: `claim${i}@example.com`, subject: 'claims', text: 'text' });
    });
    const capture = captureStatements(t.ctx.db);
    const sent = await sendQueuedMail(t.ctx);
    const statements = capture.take();
    assert.equal(sent, 60);
    const batches = statements.filter((s) => /from "mail_suppressions"/.test(s.sql)).length;
    assert.equal(batches, 3, statements.map((s) => s.sql).join('\n'));
  });
});
