import assert from 'node:assert/strict';
import net from 'node:net';
import { describe, it } from 'node:test';
import pino from 'pino';
import { intakeNetwork } from '../../src/mail/intake.ts';
import { SnsCertificateStore } from '../../src/mail/sns-certificates.ts';
import { useMailLogger } from '../../src/mail/log.ts';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createContext } from '../../src/context.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { startApp, testEnv } from '../support/app.ts';
import { freshDatabase } from '../support/database.ts';
import {
  PATH,
  activeSuppressions,
  certUrl,
  events,
  hostPath,
  lastRefusal,
  logged,
  pki,
  post,
  serveCert,
  standIn,
  t,
  useIntakeApp,
} from './intake-harness.ts';
import { CERT_URL, fixture, issue, notification } from './sns-stand-in.ts';

describe('mail-provider intake (SNS): refusals, failures, configuration', () => {
  useIntakeApp();

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
