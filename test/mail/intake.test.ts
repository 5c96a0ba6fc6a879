import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import pino from 'pino';
import { intakeNetwork } from '../../src/mail/intake.ts';
import { SnsCertificateStore } from '../../src/mail/sns-certificates.ts';
import { useMailLogger } from '../../src/mail/log.ts';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createContext } from '../../src/context.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { startApp, testEnv, type TestApp } from '../support/app.ts';
import { freshDatabase } from '../support/database.ts';
import {
  AIA_URL,
  CERT_URL,
  StandIn,
  TOPIC,
  buildPki,
  fixture,
  issue,
  notification,
  sign,
  type Issued,
  type Pki,
} from './sns-stand-in.ts';

const PATH = '/webhooks/mailprovider/';
const SNS_HOST = 'sns.us-east-1.amazonaws.com';
const certUrl = (name: string) => `https://${SNS_HOST}/SimpleNotificationService-${name}.pem`;
const hostPath = (url: string) => url.replace(/^https?:\/\//, '');

let pki: Pki;
let standIn: StandIn;
let t: TestApp;
/** What the mail logger wrote (one parsed JSON object per line). */
const logged: { msg: string; reason?: string }[] = [];
const lastRefusal = () =>
  [...logged].reverse().find((line) => line.msg === 'mail-provider message refused')?.reason ?? '';

function post(body: unknown, contentType = 'text/plain; charset=UTF-8') {
  return t.inject({
    method: 'POST',
    url: PATH,
    headers: { 'content-type': contentType, 'x-amz-sns-message-type': 'Notification' },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

const events = () => t.ctx.db.kysely.selectFrom('mail_events').selectAll().orderBy('id').execute();
const activeSuppressions = async () =>
  (
    await t.ctx.db.kysely
      .selectFrom('mail_suppressions')
      .select('email')
      .where('released_at', 'is', null)
      .orderBy('email')
      .execute()
  ).map((r) => r.email);

/** Serves a PEM at a certificate URL of the stand-in. */
function serveCert(url: string, ...certs: Issued[]) {
  standIn.routes.set(hostPath(url), { body: certs.map((c) => c.pem).join('\n') });
}

// The hooks live inside this describe, not at the top level: files may share a process
// (`npm run test:fast`), where a top-level hook would run around every other file's tests too.
describe('mail-provider intake (SNS)', () => {
  before(async () => {
    pki = await buildPki();
    const tlsCert = await issue({
      subject: `CN=${SNS_HOST}`,
      issuer: pki.root,
      dnsNames: [SNS_HOST, 'sns.eu-west-1.amazonaws.com'],
    });
    standIn = new StandIn(pki.root.pem);
    await standIn.start(tlsCert);
    serveCert(CERT_URL, pki.signing);
    standIn.routes.set(hostPath(AIA_URL), { body: Buffer.from(pki.intermediate.cert.rawData) });
    t = await startApp({
      SERVICE_MAILPROVIDER_WEBHOOK_ENABLED: 'true',
      SERVICE_MAILPROVIDER_TRUST_ANCHORS_FILE: pki.anchorsFile,
      SERVICE_MAILPROVIDER_TOPIC_ARN: TOPIC,
    });
    intakeNetwork(t.ctx).agents = standIn.agents();
    useMailLogger(t.ctx, pino({ level: 'info' }, { write: (line: string) => logged.push(JSON.parse(line)) }));
  });
  after(async () => {
    await t.close();
    await standIn.stop();
  });
  beforeEach(async () => {
    standIn.reset();
    logged.length = 0;
    intakeNetwork(t.ctx).agents = standIn.agents();
    intakeNetwork(t.ctx).timeoutMs = 10_000;
    await t.ctx.db.kysely.deleteFrom('mail_events').execute();
    await t.ctx.db.kysely.deleteFrom('mail_suppressions').execute();
  });

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

  describe('mail-provider intake: refusals', () => {
    const refused = async (body: unknown, status = 403) => {
      const res = await post(body);
      assert.equal(res.statusCode, status, res.body);
      assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
      assert.deepEqual(await events(), [], 'nothing stored');
      assert.deepEqual(await activeSuppressions(), []);
      return res;
    };
    const bounce = () => fixture('bounce-permanent-with-dsn.json');

    for (const url of [
      'https://sns.us-east-1.amazonaws.com.evil.com/SimpleNotificationService-abc.pem',
      'https://evilsns.us-east-1.amazonaws.com/SimpleNotificationService-abc.pem',
      'https://sns.us-east-1.amazonaws.com@evil.com/SimpleNotificationService-abc.pem',
      'https://sns.s3-us-east-1.amazonaws.com/SimpleNotificationService-abc.pem',
      'https://sns.us-east-1.amazonaws.com/SimpleNotificationService-x.pem?y',
      'https://sns.us-east-1.amazonaws.com/%2e%2e/SimpleNotificationService-x.pem',
      'https://sns.us-east-1.amazonaws.com/SimpleNotificationService-x%2epem',
      'http://sns.us-east-1.amazonaws.com/SimpleNotificationService-abc.pem',
      'https://sns.us-east-1.amazonaws.com:8443/SimpleNotificationService-abc.pem',
    ]) {
      it(`SigningCertURL ${url} → 403 with zero fetches`, async () => {
        await refused(notification(bounce(), pki.signing.privateKey, { certUrl: url }));
        assert.match(lastRefusal(), /^SigningCertURL/);
        assert.equal(standIn.connections, 0);
        assert.deepEqual(standIn.requests, []);
      });
    }

    it('a redirecting certificate host → 403, the redirect is not followed', async () => {
      const url = certUrl('redirect');
      standIn.routes.set(hostPath(url), { status: 302, headers: { location: CERT_URL } });
      await refused(notification(bounce(), pki.signing.privateKey, { certUrl: url }));
      assert.match(lastRefusal(), /302/);
      assert.deepEqual(standIn.requests, [hostPath(url)]);
    });

    it('an oversized certificate (over 10 KiB) → 403', async () => {
      const url = certUrl('oversized');
      standIn.routes.set(hostPath(url), { body: pki.signing.pem + '\n' + 'x'.repeat(11 * 1024) });
      await refused(notification(bounce(), pki.signing.privateKey, { certUrl: url }));
      assert.match(lastRefusal(), /larger than 10240 bytes/);
    });

    it('an expired certificate → 403', async () => {
      const expired = await issue({
        subject: 'CN=sns.amazonaws.com',
        issuer: pki.intermediate,
        notBefore: new Date(Date.now() - 10 * 86_400_000),
        notAfter: new Date(Date.now() - 86_400_000),
      });
      const url = certUrl('expired');
      serveCert(url, expired, pki.intermediate);
      await refused(notification(bounce(), expired.privateKey, { certUrl: url }));
      assert.match(lastRefusal(), /not valid now/);
    });

    it('a certificate from an untrusted CA → 403', async () => {
      const otherRoot = await issue({ subject: 'CN=Test Root CA,O=svc tests', ca: true });
      const rogue = await issue({ subject: 'CN=sns.amazonaws.com', issuer: otherRoot });
      const url = certUrl('untrusted');
      serveCert(url, rogue, otherRoot);
      await refused(notification(bounce(), rogue.privateKey, { certUrl: url }));
      assert.match(lastRefusal(), /trusted root/);
    });

    it('a certificate with a wrong subject → 403', async () => {
      const wrong = await issue({ subject: 'CN=sns.amazonaws.com.evil.com', issuer: pki.intermediate });
      const url = certUrl('wrongsubject');
      serveCert(url, wrong, pki.intermediate);
      await refused(notification(bounce(), wrong.privateKey, { certUrl: url }));
      assert.match(lastRefusal(), /subject/);
    });

    it('an intermediate offered by a host other than Amazon Trust Services is not fetched → 403', async () => {
      const leaf = await issue({
        subject: 'CN=sns.amazonaws.com',
        issuer: pki.intermediate,
        aia: 'http://crt.evil.example/int.cer',
      });
      const url = certUrl('evilaia');
      serveCert(url, leaf);
      await refused(notification(bounce(), leaf.privateKey, { certUrl: url }));
      assert.match(lastRefusal(), /not an Amazon Trust Services host/);
      assert.deepEqual(standIn.requests, [hostPath(url)]);
    });

    it('the intermediate may come in the PEM file itself (no AIA fetch)', async () => {
      const leaf = await issue({ subject: 'CN=sns.amazonaws.com', issuer: pki.intermediate });
      const url = certUrl('bundled');
      serveCert(url, leaf, pki.intermediate);
      assert.equal((await post(notification(bounce(), leaf.privateKey, { certUrl: url }))).statusCode, 200);
      assert.deepEqual(standIn.requests, [hostPath(url)]);
    });

    it('a tampered Message → 403', async () => {
      const message = notification(bounce(), pki.signing.privateKey);
      await refused({ ...message, Message: message.Message.replace('jane@example.com', 'john@example.com') });
      assert.equal(lastRefusal(), 'bad signature');
    });

    it('a tampered Subject → 403', async () => {
      const message = notification(bounce(), pki.signing.privateKey, { subject: 'Original' });
      await refused({ ...message, Subject: 'Changed' });
      const { Subject: _dropped, ...withoutSubject } = message;
      await refused(withoutSubject);
    });

    it('a message signed by another key → 403', async () => {
      const other = await issue({ subject: 'CN=sns.amazonaws.com', issuer: pki.intermediate });
      await refused(notification(bounce(), other.privateKey));
    });

    it('SignatureVersion 3 → 403 with zero fetches', async () => {
      const message = notification(bounce(), pki.signing.privateKey);
      await refused({ ...message, SignatureVersion: '3' });
      assert.equal(standIn.connections, 0);
    });

    it('a wrong topic → 403 with zero fetches', async () => {
      await refused(
        notification(bounce(), pki.signing.privateKey, { topic: 'arn:aws:sns:us-east-1:123456789012:other' }),
      );
      assert.equal(standIn.connections, 0);
    });

    it('51 recipients → 403', async () => {
      const inner = fixture('delivery.json') as { mail: { destination: string[] }; delivery: { recipients: string[] } };
      inner.delivery.recipients = Array.from({ length: 51 }, (_, i) => `r${i}@example.com`);
      await refused(notification(inner, pki.signing.privateKey));
      inner.delivery.recipients = inner.delivery.recipients.slice(0, 50);
      inner.mail.destination = inner.delivery.recipients;
      assert.equal((await post(notification(inner, pki.signing.privateKey))).statusCode, 200, '50 recipients are fine');
    });

    it('a body over 512 KiB → 413', async () => {
      const message = notification(bounce(), pki.signing.privateKey);
      const res = await post({ ...message, Padding: 'x'.repeat(512 * 1024) });
      assert.equal(res.statusCode, 413);
      assert.deepEqual(await events(), []);
      assert.equal(standIn.connections, 0);
    });

    it('a JSON array body → 400', async () => {
      const res = await refused([notification(bounce(), pki.signing.privateKey)], 400);
      assert.match(res.json().detail, /JSON object/);
    });

    it('a body that is not JSON → 400', async () => {
      await refused('Type=Notification', 400);
    });

    it('a missing or non-string required field → 400', async () => {
      const message = notification(bounce(), pki.signing.privateKey);
      const { Signature: _signature, ...unsigned } = message;
      assert.match((await refused(unsigned, 400)).json().detail, /Signature/);
      assert.match((await refused({ ...message, MessageId: 7 }, 400)).json().detail, /MessageId/);
      assert.match((await refused({ ...message, Type: 'Other' }, 400)).json().detail, /Type/);
    });
  });

  describe('mail-provider intake: transient certificate failures', () => {
    it('a 5xx from the certificate host → 500, and the retry succeeds', async () => {
      const url = certUrl('flaky');
      standIn.routes.set(hostPath(url), { status: 503, body: 'slow down' });
      const message = notification(fixture('delivery.json'), pki.signing.privateKey, { certUrl: url });
      const res = await post(message);
      assert.equal(res.statusCode, 500);
      assert.deepEqual(await events(), []);
      serveCert(url, pki.signing);
      assert.equal((await post(message)).statusCode, 200);
      assert.equal((await events()).length, 1);
    });

    it('a certificate host that does not answer in time → 500', async () => {
      const url = certUrl('hanging');
      standIn.routes.set(hostPath(url), { hang: true });
      intakeNetwork(t.ctx).timeoutMs = 300;
      const started = Date.now();
      const res = await post(notification(fixture('delivery.json'), pki.signing.privateKey, { certUrl: url }));
      assert.equal(res.statusCode, 500);
      assert.ok(Date.now() - started < 5000);
      assert.ok(logged.some((line) => line.msg.includes('will retry')));
      assert.deepEqual(await events(), []);
    });

    it('a connection failure → 500', async () => {
      const closed = net.createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const port = (closed.address() as net.AddressInfo).port;
      await new Promise((resolve) => closed.close(resolve));
      intakeNetwork(t.ctx).agents = standIn.agents({ httpsPort: port });
      const res = await post(
        notification(fixture('delivery.json'), pki.signing.privateKey, { certUrl: certUrl('unreachable') }),
      );
      assert.equal(res.statusCode, 500);
      assert.deepEqual(await events(), []);
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

  describe('mail-provider intake without a configured topic', () => {
    it('warns at start and accepts any topic', async () => {
      const database = await freshDatabase();
      const ctx = createContext(
        loadConfig(
          testEnv(database, {
            SERVICE_MAILPROVIDER_WEBHOOK_ENABLED: 'true',
            SERVICE_MAILPROVIDER_TRUST_ANCHORS_FILE: pki.anchorsFile,
          }),
        ),
      );
      const lines: { level: number; msg: string }[] = [];
      useMailLogger(ctx, pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) }));
      await migrateToLatest(ctx.db);
      const app = await buildApp(ctx);
      try {
        assert.ok(
          lines.some((line) => line.level === 40 && line.msg.includes('SERVICE_MAILPROVIDER_TOPIC_ARN is not set')),
        );
        intakeNetwork(ctx).agents = standIn.agents();
        const message = notification(fixture('delivery.json'), pki.signing.privateKey, {
          topic: 'arn:aws:sns:eu-west-1:210987654321:anything',
        });
        const res = await app.inject({
          method: 'POST',
          url: PATH,
          headers: { 'content-type': 'text/plain' },
          payload: JSON.stringify(message),
        });
        assert.equal(res.statusCode, 200);
      } finally {
        await app.close();
        await ctx.db.close();
        await database.drop();
      }
    });
  });

  describe('mail-provider intake switched off', () => {
    it('the route does not exist', async () => {
      const off = await startApp();
      try {
        const res = await off.inject({
          method: 'POST',
          url: PATH,
          headers: { 'content-type': 'text/plain' },
          payload: '{}',
        });
        assert.equal(res.statusCode, 404);
      } finally {
        await off.close();
      }
    });
  });

  describe('certificate cache', () => {
    it('is bounded (least recently used out) and keyed by URL', async () => {
      const store = new SnsCertificateStore({
        trustAnchorsFile: pki.anchorsFile,
        network: () => ({ agents: standIn.agents(), timeoutMs: 10_000 }),
        maxEntries: 2,
      });
      const urls = ['lru1', 'lru2', 'lru3'].map(certUrl);
      for (const url of urls) serveCert(url, pki.signing, pki.intermediate);
      for (const url of urls) await store.publicKeyFor(url);
      assert.equal(store.cachedKeys, 2);
      standIn.reset();
      await store.publicKeyFor(urls[2]);
      await store.publicKeyFor(urls[1]);
      assert.deepEqual(standIn.requests, [], 'recent entries are served from the cache');
      await store.publicKeyFor(urls[0]);
      assert.deepEqual(standIn.requests, [hostPath(urls[0])], 'the evicted entry is fetched again');
    });
  });
});
