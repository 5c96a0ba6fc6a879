import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import type {
  KyselyPlugin,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from 'kysely';
import { SMTPServer } from 'smtp-server';
import pino from 'pino';
import { queueMail, sendQueuedMail, mailWorkerTask, purgeOldMail } from '../../src/mail/outbox.ts';
import { useMailLogger } from '../../src/mail/log.ts';
import { startWorker } from '../../src/worker/worker.ts';
import { WORKER_TASKS } from '../../src/worker-tasks.ts';
import { startApp, type TestApp } from '../support/app.ts';
import { readMailbox } from './eml.ts';

/** Counts the queries that read the suppression list. */
class SuppressionLookups implements KyselyPlugin {
  count = 0;
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    if (args.node.kind === 'SelectQueryNode' && JSON.stringify(args.node).includes('"mail_suppressions"')) this.count++;
    return args.node;
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

async function suppress(t: TestApp, email: string) {
  const now = new Date().toISOString();
  await t.ctx.db.kysely
    .insertInto('mail_suppressions')
    .values({ email, reason: 'bounce', event_key: null, occurred_at: now, created_at: now })
    .execute();
}

const outbox = (t: TestApp) => t.ctx.db.kysely.selectFrom('mail_outbox').selectAll().orderBy('id').execute();

describe('mail outbox with the development file transport', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp();
  });
  after(() => t.close());
  beforeEach(async () => {
    await t.ctx.db.kysely.deleteFrom('mail_outbox').execute();
    await t.ctx.db.kysely.deleteFrom('mail_suppressions').execute();
    fs.rmSync(path.join(t.env.SERVICE_DATA_DIR, 'mail'), { recursive: true, force: true });
  });

  it('writes a parseable .eml whose text part holds the whole link', async () => {
    const link = `http://testserver/accounts/confirm-email/${'Ab9-_'.repeat(20)}/`;
    await t.ctx.db.kysely.transaction().execute(async (trx) => {
      await queueMail(t.ctx, trx, {
        to: 'Ünïcode Person <Person@Example.com>',
        subject: 'Confirm your e-mail address',
        text: `Hello,\n\nconfirm your address by opening this link:\n${link}\n\nThanks`,
        html: `<p><a href="${link}">Confirm</a></p>`,
      });
    });
    const [queued] = await outbox(t);
    assert.equal(queued.status, 'queued');

    const logged: { msg: string; subject?: string; links?: string[]; file?: string }[] = [];
    useMailLogger(t.ctx, pino({ level: 'info' }, { write: (line: string) => logged.push(JSON.parse(line)) }));
    assert.equal(await sendQueuedMail(t.ctx), 1);
    const written = logged.find((line) => line.msg === 'mail written')!;
    assert.equal(written.subject, 'Confirm your e-mail address');
    assert.deepEqual(written.links, [link]);
    const mails = readMailbox(t.env.SERVICE_DATA_DIR);
    assert.equal(mails.length, 1);
    assert.match(path.basename(mails[0].file), /^\d{8}T\d{9}Z-\d{8}\.eml$/);
    assert.equal(written.file, mails[0].file);
    assert.equal(mails[0].headers.get('subject'), 'Confirm your e-mail address');
    assert.match(mails[0].headers.get('to')!, /<person@example\.com>$/);
    assert.equal(mails[0].headers.get('from'), 'svc <no-reply@localhost>');
    // The link appears whole in the raw file, so a test (or a person) can take it straight from there.
    assert.equal(/http:\/\/testserver\/accounts\/confirm-email\/[^\s/]+\//.exec(mails[0].raw)?.[0], link);
    assert.ok(mails[0].text.includes(link));
    const [row] = await outbox(t);
    assert.equal(row.status, 'sent');
    assert.ok(row.sent_at && row.transport_message_id);
    assert.equal(await sendQueuedMail(t.ctx), 0, 'nothing is sent twice');
  });

  it('a rolled-back transaction leaves no mail', async () => {
    await assert.rejects(
      t.ctx.db.kysely.transaction().execute(async (trx) => {
        await queueMail(t.ctx, trx, { to: 'a@example.com', subject: 'Never', text: 'x' });
        throw new Error('rollback');
      }),
    );
    assert.equal(await sendQueuedMail(t.ctx), 0);
    assert.deepEqual(await outbox(t), []);
    assert.deepEqual(readMailbox(t.env.SERVICE_DATA_DIR), []);
  });

  it('guards a batch of 3 messages and 5 recipients, 2 suppressed, in one lookup query', async () => {
    await suppress(t, 'bob@example.com');
    await suppress(t, 'dan@example.com');
    const db = t.ctx.db.kysely;
    await queueMail(t.ctx, db, { to: ['Alice <alice@example.com>', 'bob@example.com'], subject: 'One', text: 'one' });
    await queueMail(t.ctx, db, {
      to: 'carol@example.com',
      cc: '"Dan D." <DAN@Example.COM>',
      subject: 'Two',
      text: 'two',
    });
    await queueMail(t.ctx, db, { to: 'erin@example.com', bcc: 'frank@example.com', subject: 'Three', text: 'three' });

    const logged: { msg: string; recipient?: string }[] = [];
    useMailLogger(t.ctx, pino({ level: 'info' }, { write: (line: string) => logged.push(JSON.parse(line)) }));
    const counter = new SuppressionLookups();
    const original = t.ctx.db.kysely;
    t.ctx.db.kysely = original.withPlugin(counter);
    try {
      assert.equal(await sendQueuedMail(t.ctx), 3);
    } finally {
      t.ctx.db.kysely = original;
    }
    assert.equal(counter.count, 1, 'all recipients of the batch are looked up in one query');
    const refusals = logged
      .filter((line) => line.msg === 'mail recipient refused: address is suppressed')
      .map((line) => line.recipient);
    assert.deepEqual(refusals.sort(), ['bob@example.com', 'dan@example.com'], 'each refusal is logged');

    const mails = readMailbox(t.env.SERVICE_DATA_DIR);
    const bySubject = new Map(mails.map((m) => [m.headers.get('subject'), m.headers]));
    assert.equal(bySubject.get('One')!.get('to'), 'Alice <alice@example.com>');
    assert.equal(bySubject.get('Two')!.get('to'), 'carol@example.com');
    assert.equal(bySubject.get('Two')!.get('cc'), undefined);
    assert.equal(bySubject.get('Three')!.get('to'), 'erin@example.com');
    assert.equal(bySubject.get('Three')!.get('bcc'), 'frank@example.com');
    const rows = await outbox(t);
    assert.deepEqual(
      rows.map((r) => [r.subject, r.status, JSON.parse(r.suppressed_recipients)]),
      [
        ['One', 'sent', ['bob@example.com']],
        ['Two', 'sent', ['dan@example.com']],
        ['Three', 'sent', []],
      ],
    );
  });

  it('drops a message whose recipients are all suppressed and reports 0 sent', async () => {
    await suppress(t, 'gone@example.com');
    await queueMail(t.ctx, t.ctx.db.kysely, {
      to: 'Gone <GONE@example.com>',
      bcc: 'gone@example.com',
      subject: 'Dropped',
      text: 'x',
    });
    assert.equal(await sendQueuedMail(t.ctx), 0);
    const [row] = await outbox(t);
    assert.equal(row.status, 'suppressed');
    assert.deepEqual(JSON.parse(row.suppressed_recipients), ['gone@example.com']);
    assert.deepEqual(readMailbox(t.env.SERVICE_DATA_DIR), []);
  });

  it('a released suppression no longer blocks', async () => {
    await suppress(t, 'back@example.com');
    await t.ctx.db.kysely.updateTable('mail_suppressions').set({ released_at: new Date().toISOString() }).execute();
    await queueMail(t.ctx, t.ctx.db.kysely, { to: 'back@example.com', subject: 'Welcome back', text: 'x' });
    assert.equal(await sendQueuedMail(t.ctx), 1);
  });

  it('an address that does not parse is refused and recorded as failed', async () => {
    await queueMail(t.ctx, t.ctx.db.kysely, { to: 'not an address', subject: 'Bad', text: 'x' });
    assert.equal(await sendQueuedMail(t.ctx), 0);
    const [row] = await outbox(t);
    assert.equal(row.status, 'failed');
    assert.equal(row.error, 'no valid recipient address');
  });

  it('finished rows older than the retention are purged, queued ones never', async () => {
    const db = t.ctx.db.kysely;
    await queueMail(t.ctx, db, { to: 'old@example.com', subject: 'Old', text: 'x' });
    await queueMail(t.ctx, db, { to: 'new@example.com', subject: 'New', text: 'x' });
    await sendQueuedMail(t.ctx);
    await queueMail(t.ctx, db, { to: 'waiting@example.com', subject: 'Waiting', text: 'x' });
    const longAgo = new Date(Date.now() - 31 * 86_400_000).toISOString();
    await db
      .updateTable('mail_outbox')
      .set({ updated_at: longAgo })
      .where('subject', 'in', ['Old', 'Waiting'])
      .execute();
    assert.equal(await purgeOldMail(t.ctx), 1);
    assert.deepEqual(
      (await outbox(t)).map((r) => r.subject),
      ['New', 'Waiting'],
    );
  });

  it('two senders running at once send each message exactly once', async () => {
    for (let i = 0; i < 60; i++)
      await queueMail(t.ctx, t.ctx.db.kysely, { to: `n${i}@example.com`, subject: `N${i}`, text: 'x' });
    const counts = await Promise.all([sendQueuedMail(t.ctx), sendQueuedMail(t.ctx), sendQueuedMail(t.ctx)]);
    assert.equal(
      counts.reduce((a, b) => a + b, 0),
      60,
    );
    const subjects = readMailbox(t.env.SERVICE_DATA_DIR).map((m) => m.headers.get('subject'));
    assert.equal(subjects.length, 60);
    assert.equal(new Set(subjects).size, 60);
    assert.ok((await outbox(t)).every((r) => r.status === 'sent'));
  });

  it('queueMail refuses a message without recipients', async () => {
    await assert.rejects(queueMail(t.ctx, t.ctx.db.kysely, { to: [], subject: 'x', text: 'x' }), TypeError);
  });

  it('the worker sends as soon as a message is queued', async () => {
    assert.ok(WORKER_TASKS.includes(mailWorkerTask));
    const worker = startWorker(t.ctx, [mailWorkerTask]);
    try {
      const started = Date.now();
      await queueMail(t.ctx, t.ctx.db.kysely, { to: 'fast@example.com', subject: 'Fast', text: 'x' });
      while (readMailbox(t.env.SERVICE_DATA_DIR).length === 0) {
        assert.ok(Date.now() - started < 5000, 'the worker wrote the mail');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.equal(readMailbox(t.env.SERVICE_DATA_DIR)[0].headers.get('subject'), 'Fast');
    } finally {
      await worker.stop();
    }
  });
});

describe('mail outbox with SMTP', () => {
  let t: TestApp;
  let server: SMTPServer;
  const received: { rcpt: string[]; data: string }[] = [];
  before(async () => {
    // A real SMTP server that refuses one mailbox, the way a provider refuses a recipient.
    server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      onRcptTo(address, _session, callback) {
        if (address.address.startsWith('reject')) {
          const error = new Error('5.1.1 mailbox unavailable') as Error & { responseCode: number };
          error.responseCode = 550;
          return callback(error);
        }
        callback();
      },
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          const rcpt = session.envelope.rcptTo.map((r) => r.address);
          received.push({ rcpt, data: Buffer.concat(chunks).toString() });
          // A slow mailbox: the provider takes its time to accept each message.
          setTimeout(callback, rcpt[0].startsWith('slow') ? 250 : 0);
        });
      },
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.server.address() as { port: number }).port;
    t = await startApp({
      SERVICE_EMAIL_URL: `smtp://127.0.0.1:${port}`,
      SERVICE_EMAIL_FROM: 'Example <no-reply@example.com>',
    });
  });
  after(async () => {
    await t.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('records a refused message as failed and goes on with the next one', async () => {
    await t.ctx.db.kysely.transaction().execute(async (trx) => {
      await queueMail(t.ctx, trx, { to: 'reject@example.com', subject: 'Refused', text: 'x' });
      await queueMail(t.ctx, trx, { to: 'ok@example.com', subject: 'Accepted', text: 'hello over smtp' });
    });
    const sent = await sendQueuedMail(t.ctx);
    assert.equal(sent, 1);
    const rows = await outbox(t);
    assert.equal(rows[0].status, 'failed');
    assert.match(rows[0].error!, /550/);
    assert.equal(rows[1].status, 'sent');
    assert.equal(received.length, 1);
    assert.deepEqual(received[0].rcpt, ['ok@example.com']);
    assert.match(received[0].data, /^From: Example <no-reply@example\.com>$/m);
    assert.match(received[0].data, /hello over smtp/);
  });

  it('a recipient refused while others are accepted is recorded on the sent row', async () => {
    await t.ctx.db.kysely.deleteFrom('mail_outbox').execute();
    received.length = 0;
    await queueMail(t.ctx, t.ctx.db.kysely, {
      to: ['ok2@example.com', 'reject2@example.com'],
      subject: 'Partly',
      text: 'x',
    });
    assert.equal(await sendQueuedMail(t.ctx), 1);
    const [row] = await outbox(t);
    assert.equal(row.status, 'sent');
    assert.equal(row.error, 'refused by the mail server: reject2@example.com');
    assert.deepEqual(received[0].rcpt, ['ok2@example.com']);
  });
  it('a stopping worker finishes the message in flight and hands the rest of its batch back to the queue', async () => {
    await t.ctx.db.kysely.deleteFrom('mail_outbox').execute();
    received.length = 0;
    const count = 20;
    for (let i = 0; i < count; i++)
      await queueMail(t.ctx, t.ctx.db.kysely, { to: `slow${i}@example.com`, subject: `Slow ${i}`, text: 'x' });
    const worker = startWorker(t.ctx, [mailWorkerTask]);
    const started = Date.now();
    while (received.length === 0) {
      assert.ok(Date.now() - started < 5000, 'the worker began sending');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const stopping = Date.now();
    await worker.stop();
    // Sending all of them takes 20 × 250 ms; a stop waits for one message at most.
    assert.ok(Date.now() - stopping < 1500, `stopped in ${Date.now() - stopping} ms`);
    const rows = await outbox(t);
    const sent = rows.filter((row) => row.status === 'sent');
    assert.ok(sent.length < count, 'the worker stopped before the queue was empty');
    assert.equal(sent.length, received.length, 'every message the server took is recorded as sent');
    assert.deepEqual(
      rows.filter((row) => row.status !== 'sent').map((row) => [row.status, row.locked_until]),
      Array.from({ length: count - sent.length }, () => ['queued', null]),
      'the rest are queued again, with no lease to wait out',
    );
    assert.equal(await sendQueuedMail(t.ctx), count - sent.length);
    assert.deepEqual(
      received.map((r) => r.rcpt[0]).sort(),
      Array.from({ length: count }, (_, i) => `slow${i}@example.com`).sort(),
      'each message delivered exactly once',
    );
  });
});
