import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  PATH,
  SNS_HOST,
  activeSuppressions,
  events,
  hostPath,
  pki,
  post,
  standIn,
  t,
  useIntakeApp,
} from './intake-harness.ts';
import { AIA_URL, CERT_URL, TOPIC, fixture, notification, sign } from './sns-stand-in.ts';

describe('mail-provider intake (SNS): accepted messages', () => {
  useIntakeApp();

  describe('mail-provider intake: accepted notifications', () => {
    it('stores a Permanent bounce (SignatureVersion 2) and suppresses the bounced address', async () => {
      const message = notification(fixture('bounce-permanent-with-dsn.json'), pki.signing.privateKey);
      const res = await post(message);
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json(), { status: 'recorded' });
      assert.equal(res.headers['set-cookie'], undefined, 'a machine endpoint: no browser cookie');
      const rows = await events();
      assert.equal(rows.length, 1);
      assert.equal(rows[0].event_key, message.MessageId);
      assert.equal(rows[0].event_type, 'bounce');
      assert.equal(rows[0].bounce_type, 'Permanent');
      assert.equal(rows[0].email, 'jane@example.com');
      assert.equal(rows[0].suppressed, 1);
      assert.equal(rows[0].topic_arn, TOPIC);
      assert.deepEqual(await activeSuppressions(), ['jane@example.com']);
      // The certificate came from the stand-in SNS host, its intermediate from the Amazon Trust Services stand-in.
      assert.deepEqual(standIn.requests, [hostPath(CERT_URL), hostPath(AIA_URL)]);
    });

    it('accepts SignatureVersion 1 (SHA1withRSA), reusing the cached certificate', async () => {
      const res = await post(
        notification(fixture('complaint-abuse-with-feedback-report.json'), pki.signing.privateKey, { version: '1' }),
      );
      assert.equal(res.statusCode, 200);
      assert.deepEqual(standIn.requests, [], 'the authenticated certificate is cached by URL');
      const [row] = await events();
      assert.equal(row.event_type, 'complaint');
      assert.equal(row.complaint_type, 'abuse');
      assert.deepEqual(await activeSuppressions(), ['richard@example.com']);
    });

    it('a Subject, when present, is signed and accepted', async () => {
      const res = await post(
        notification(fixture('complaint-no-feedback-report.json'), pki.signing.privateKey, {
          subject: 'Amazon SES Email Event Notification',
        }),
      );
      assert.equal(res.statusCode, 200);
      assert.equal((await activeSuppressions()).length, 1);
    });

    it('a multi-recipient bounce stores one row per recipient with keys <MessageId>#<index>', async () => {
      const message = notification(fixture('bounce-permanent-no-dsn-two-recipients.json'), pki.signing.privateKey);
      assert.equal((await post(message)).statusCode, 200);
      const rows = await events();
      assert.deepEqual(
        rows.map((r) => [r.event_key, r.email]),
        [
          [`${message.MessageId}#0`, 'jane@example.com'],
          [`${message.MessageId}#1`, 'richard@example.com'],
        ],
      );
      assert.deepEqual(await activeSuppressions(), ['jane@example.com', 'richard@example.com']);
    });

    for (const [file, type] of [
      ['derived-bounce-transient-mailboxfull.json', 'bounce'],
      ['derived-bounce-transient-general-out-of-office.json', 'bounce'],
      ['derived-bounce-undetermined.json', 'bounce'],
      ['delivery.json', 'delivery'],
      ['event-publishing-delivery-delay.json', 'delivery_delay'],
      ['event-publishing-reject.json', 'reject'],
    ] as const) {
      it(`${file} is stored as ${type} and suppresses nobody`, async () => {
        assert.equal((await post(notification(fixture(file), pki.signing.privateKey))).statusCode, 200);
        const rows = await events();
        assert.ok(rows.length >= 1);
        assert.ok(rows.every((r) => r.event_type === type && r.suppressed === 0));
        assert.deepEqual(await activeSuppressions(), []);
      });
    }

    it('the event-publishing form (eventType) of a Permanent bounce suppresses', async () => {
      assert.equal(
        (await post(notification(fixture('event-publishing-bounce-permanent.json'), pki.signing.privateKey)))
          .statusCode,
        200,
      );
      assert.equal((await events())[0].event_type, 'bounce');
      assert.equal((await activeSuppressions()).length, 1);
    });

    it('a replayed notification answers 200 and stores one set of rows', async () => {
      const message = notification(fixture('bounce-permanent-no-dsn-two-recipients.json'), pki.signing.privateKey);
      assert.deepEqual((await post(message)).json(), { status: 'recorded' });
      const first = await t.ctx.db.kysely.selectFrom('mail_suppressions').selectAll().orderBy('id').execute();
      const replay = await post(message);
      assert.equal(replay.statusCode, 200);
      assert.deepEqual(replay.json(), { status: 'duplicate' });
      assert.equal((await events()).length, 2);
      assert.deepEqual(
        await t.ctx.db.kysely.selectFrom('mail_suppressions').selectAll().orderBy('id').execute(),
        first,
      );
    });

    it('the same notification delivered twice at once is stored once', async () => {
      const message = notification(fixture('bounce-permanent-no-dsn-two-recipients.json'), pki.signing.privateKey);
      const answers = await Promise.all([post(message), post(message), post(message)]);
      assert.deepEqual(
        answers.map((a) => a.statusCode),
        [200, 200, 200],
      );
      assert.deepEqual(answers.map((a) => a.json().status).sort(), ['duplicate', 'duplicate', 'recorded']);
      assert.equal((await events()).length, 2);
      assert.equal((await t.ctx.db.kysely.selectFrom('mail_suppressions').select('id').execute()).length, 2);
    });

    it('an inner Message that is not a JSON object is answered 200 and stores nothing', async () => {
      for (const inner of ['Hello world!', '[1,2]', 'null']) {
        const res = await post(notification(inner, pki.signing.privateKey));
        assert.equal(res.statusCode, 200);
        assert.deepEqual(res.json(), { status: 'ignored' });
      }
      assert.deepEqual(await events(), []);
    });

    it('an unknown SES type is stored as other', async () => {
      const inner = { notificationType: 'AmazonSnsSubscriptionSucceeded', message: 'You have successfully subscribed' };
      const message = notification(inner, pki.signing.privateKey);
      assert.equal((await post(message)).statusCode, 200);
      const rows = await events();
      assert.deepEqual(
        rows.map((r) => [r.event_key, r.event_type, r.email]),
        [[message.MessageId, 'other', null]],
      );
    });

    it('is not part of the public API document', async () => {
      const doc = (await t.inject({ url: '/api/schema/' })).json();
      assert.equal(doc.paths[PATH], undefined);
    });

    it('parses the body as JSON whatever the content type', async () => {
      const res = await post(
        notification(fixture('delivery.json'), pki.signing.privateKey),
        'application/x-www-form-urlencoded',
      );
      assert.equal(res.statusCode, 200);
    });
  });

  describe('mail-provider intake over a real socket', () => {
    it('accepts a notification posted the way SNS posts it, and answers 413 to an oversized body', async () => {
      const base = await t.listen();
      const message = notification(fixture('bounce-permanent-with-dsn.json'), pki.signing.privateKey);
      const res = await fetch(base + PATH, {
        method: 'POST',
        headers: {
          'content-type': 'text/plain; charset=UTF-8',
          'x-amz-sns-message-type': 'Notification',
          'x-amz-sns-message-id': message.MessageId,
          'x-amz-sns-topic-arn': TOPIC,
          'user-agent': 'Amazon Simple Notification Service Agent',
        },
        body: JSON.stringify(message),
      });
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { status: 'recorded' });
      assert.equal((await events()).length, 1);

      const big = await fetch(base + PATH, {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: 'x'.repeat(600 * 1024),
      });
      assert.equal(big.status, 413);
      assert.equal((await big.json()).status, 413);
    });
  });

  describe('mail-provider intake: release semantics', () => {
    const bounceAt = (email: string, at: Date) => {
      const inner = fixture('event-publishing-bounce-permanent.json') as {
        bounce: { timestamp: string; bouncedRecipients: { emailAddress: string }[] };
        mail: { destination: string[] };
      };
      inner.bounce.timestamp = at.toISOString();
      inner.bounce.bouncedRecipients = [{ emailAddress: email }];
      inner.mail.destination = [email];
      return notification(inner, pki.signing.privateKey);
    };

    it('an event older than the release does not suppress again; a newer bounce does', async () => {
      const early = new Date(Date.now() - 3_600_000);
      assert.equal((await post(bounceAt('back@example.com', early))).statusCode, 200);
      assert.deepEqual(await activeSuppressions(), ['back@example.com']);
      const release = await t.inject({ method: 'DELETE', url: '/api/v1/admin/suppressions/back@example.com/' });
      assert.ok([401, 404].includes(release.statusCode), 'the admin API needs credentials (tested in admin tests)');
      const { releaseSuppression } = await import('../../src/mail/suppressions.ts');
      assert.equal(await releaseSuppression(t.ctx.db.kysely, 'back@example.com', 'test', 'mailbox fixed'), true);
      assert.deepEqual(await activeSuppressions(), []);

      // A late, different notification about a bounce that happened before the release.
      assert.equal((await post(bounceAt('back@example.com', new Date(early.getTime() + 60_000)))).statusCode, 200);
      assert.deepEqual(await activeSuppressions(), [], 'an event from before the release does not undo it');

      await new Promise((resolve) => setTimeout(resolve, 5));
      assert.equal((await post(bounceAt('back@example.com', new Date()))).statusCode, 200);
      assert.deepEqual(await activeSuppressions(), ['back@example.com'], 'a new genuine bounce suppresses again');
    });

    it('notifications arriving together are each recorded and answered for themselves', async () => {
      const at = new Date(Date.now() - 60_000);
      const messages = ['a@example.com', 'b@example.com', 'a@example.com', 'c@example.com'].map((email, i) =>
        bounceAt(email, new Date(at.getTime() + i)),
      );
      const answers = await Promise.all([...messages, messages[1]].map((message) => post(message)));
      assert.deepEqual(
        answers.map((a) => a.statusCode),
        [200, 200, 200, 200, 200],
      );
      assert.deepEqual(
        answers.slice(0, 4).map((a) => a.json().status),
        ['recorded', 'recorded', 'recorded', 'recorded'],
      );
      assert.equal(answers[4].json().status, 'duplicate');
      assert.deepEqual(await activeSuppressions(), ['a@example.com', 'b@example.com', 'c@example.com']);
      // The second bounce of a@ found the address already suppressed: one suppression, one row marked.
      const rows = await events();
      assert.deepEqual(
        rows.map((r) => [r.event_key, r.suppressed]),
        messages.map((m, i) => [m.MessageId, i === 2 ? 0 : 1]),
      );
    });
  });

  describe('mail-provider intake: subscription messages', () => {
    const confirmation = (type: 'SubscriptionConfirmation' | 'UnsubscribeConfirmation', subscribeUrl: string) =>
      sign(
        {
          Type: type,
          MessageId: `sub-${Math.random()}`,
          Token: '2336412f37fb687f5d51e6e2425c464de12884e3a8f5b2a8f3b3f5c1d1e2f3a4',
          TopicArn: TOPIC,
          Message: `You have chosen to subscribe to the topic ${TOPIC}.`,
          SubscribeURL: subscribeUrl,
          Timestamp: new Date().toISOString(),
          SigningCertURL: CERT_URL,
        },
        pki.signing.privateKey,
      );
    const subscribeUrl = `https://${SNS_HOST}/?Action=ConfirmSubscription&TopicArn=${TOPIC}&Token=2336412f37fb687f5d51e6e2425c464de12884e3a8f5b2a8f3b3f5c1d1e2f3a4`;

    it('SubscriptionConfirmation: the service fetches SubscribeURL and answers 200', async () => {
      standIn.routes.set(hostPath(subscribeUrl), { body: '<ConfirmSubscriptionResponse/>' });
      const res = await post(confirmation('SubscriptionConfirmation', subscribeUrl));
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json(), { status: 'confirmed' });
      assert.ok(standIn.requests.includes(hostPath(subscribeUrl)));
    });

    it('SubscriptionConfirmation with a SubscribeURL off the SNS hosts → 403 with zero fetches', async () => {
      for (const url of [
        'https://sns.us-east-1.amazonaws.com.evil.com/?Action=ConfirmSubscription&Token=1',
        'https://sns.us-east-1.amazonaws.com/?Action=Unsubscribe&Token=1',
        'https://sns.us-east-1.amazonaws.com/x?Action=ConfirmSubscription&Token=1',
        'http://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription&Token=1',
        'https://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription&Token=%2e',
      ]) {
        const res = await post(confirmation('SubscriptionConfirmation', url));
        assert.equal(res.statusCode, 403, url);
      }
      assert.equal(standIn.connections, 0);
    });

    it('a redirecting SubscribeURL → 403', async () => {
      const url = `${subscribeUrl}&Redirect=1`;
      standIn.routes.set(hostPath(url), { status: 301, headers: { location: 'https://example.com/' } });
      assert.equal((await post(confirmation('SubscriptionConfirmation', url))).statusCode, 403);
    });

    it('UnsubscribeConfirmation: verified, answered 200', async () => {
      const res = await post(confirmation('UnsubscribeConfirmation', subscribeUrl));
      assert.equal(res.statusCode, 200);
      const tampered = { ...confirmation('UnsubscribeConfirmation', subscribeUrl), Token: 'other' };
      assert.equal((await post(tampered)).statusCode, 403);
    });
  });
});
