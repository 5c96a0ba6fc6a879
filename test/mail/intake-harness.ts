// The mail-provider intake's test harness, shared by intake.test.ts and intake-refusals.test.ts: a
// stand-in SNS host (its own PKI: root, intermediate, signing certificate), the app with the intake
// switched on, and the mail logger's lines. useIntakeApp() registers the hooks; call it inside the
// file's top-level describe: files may share a process (`npm run test:fast`), where a top-level hook
// would run around every other file's tests too. The state is exported as live bindings, set by the
// hooks, so the tests read `t`, `pki` and `standIn` as plain names.
import { after, before, beforeEach } from 'node:test';
import pino from 'pino';
import { intakeNetwork } from '../../src/mail/intake.ts';
import { useMailLogger } from '../../src/mail/log.ts';
import { startApp, type TestApp } from '../support/app.ts';
import { AIA_URL, CERT_URL, StandIn, TOPIC, buildPki, issue, type Issued, type Pki } from './sns-stand-in.ts';

export const PATH = '/webhooks/mailprovider/';
export const SNS_HOST = 'sns.us-east-1.amazonaws.com';
export const certUrl = (name: string) => `https://${SNS_HOST}/SimpleNotificationService-${name}.pem`;
export const hostPath = (url: string) => url.replace(/^https?:\/\//, '');

export let pki: Pki;
export let standIn: StandIn;
export let t: TestApp;
/** What the mail logger wrote (one parsed JSON object per line). */
export const logged: { msg: string; reason?: string }[] = [];
export const lastRefusal = () =>
  [...logged].reverse().find((line) => line.msg === 'mail-provider message refused')?.reason ?? '';

export function post(body: unknown, contentType = 'text/plain; charset=UTF-8') {
  return t.inject({
    method: 'POST',
    url: PATH,
    headers: { 'content-type': contentType, 'x-amz-sns-message-type': 'Notification' },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

export const events = () => t.ctx.db.kysely.selectFrom('mail_events').selectAll().orderBy('id').execute();
export const activeSuppressions = async () =>
  (
    await t.ctx.db.kysely
      .selectFrom('mail_suppressions')
      .select('email')
      .where('released_at', 'is', null)
      .orderBy('email')
      .execute()
  ).map((r) => r.email);

/** Serves a PEM at a certificate URL of the stand-in. */
export function serveCert(url: string, ...certs: Issued[]) {
  standIn.routes.set(hostPath(url), { body: certs.map((c) => c.pem).join('\n') });
}

/** The stand-in and the app for the enclosing describe; every test starts with no events or suppressions. */
export function useIntakeApp() {
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
}
