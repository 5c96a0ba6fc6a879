// The SNS intake under load: the real app (buildApp, production settings) serving
// POST /webhooks/mailprovider/, whose certificate fetches go to the local SNS stand-in of the tests
// (same PKI and wire protocol as AWS; the intake's URL checks stay strict). The certificate is
// fetched once, by a first notification, and cached: what the load measures is parsing, the
// RSA signature check, the SES event reading and the database write.
// Usage: node bench/inproc/sns-server.ts <bodies-file> <distinct-messages>  (env: the service's)
// Writes one signed notification per line to <bodies-file>, then prints "listening <port>" on stderr:
// stdout carries the production log lines, which the harness sends to /dev/null like every server's.
import fs from 'node:fs';
import { request } from 'undici';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createContext } from '../../src/context.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { intakeNetwork } from '../../src/mail/intake.ts';
import { CERT_URL, StandIn, TOPIC, buildPki, fixture, issue, notification } from '../../test/mail/sns-stand-in.ts';

const [bodiesFile, countArg] = process.argv.slice(2);
const SNS_HOST = new URL(CERT_URL).host;
const pki = await buildPki();
const standIn = new StandIn(pki.root.pem);
await standIn.start(await issue({ subject: `CN=${SNS_HOST}`, issuer: pki.root, dnsNames: [SNS_HOST] }));
standIn.routes.set(`${SNS_HOST}${new URL(CERT_URL).pathname}`, { body: pki.signing.pem + '\n' + pki.intermediate.pem });

const ctx = createContext(
  loadConfig({
    ...process.env,
    SERVICE_MAILPROVIDER_WEBHOOK_ENABLED: 'true',
    SERVICE_MAILPROVIDER_TRUST_ANCHORS_FILE: pki.anchorsFile,
    SERVICE_MAILPROVIDER_TOPIC_ARN: TOPIC,
  }),
);
await migrateToLatest(ctx.db);
const app = await buildApp(ctx);
intakeNetwork(ctx).agents = standIn.agents();

// Distinct notifications (each its own MessageId, so each is a new row); RSA signing is slow, so a
// few thousand are made and the load rotates over them (later passes are verified replays).
const bounce = fixture('bounce-permanent-with-dsn.json');
const lines: string[] = [];
for (let i = 0; i < Number(countArg); i++) lines.push(JSON.stringify(notification(bounce, pki.signing.privateKey)));
fs.writeFileSync(bodiesFile, lines.join('\n') + '\n');

await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
const port = (app.server.address() as { port: number }).port;
// One notification first: it fetches and caches the certificate chain.
const first = await request(`http://127.0.0.1:${port}/webhooks/mailprovider/`, {
  method: 'POST',
  headers: { 'content-type': 'text/plain; charset=UTF-8', 'x-amz-sns-message-type': 'Notification' },
  body: JSON.stringify(notification(bounce, pki.signing.privateKey)),
});
const answer = await first.body.text();
if (first.statusCode !== 200) throw new Error(`first notification → ${first.statusCode}: ${answer}`);
process.stderr.write(`answer ${answer}\nlistening ${port}\n`);
process.on('SIGTERM', () => {
  void (async () => {
    await app.close();
    await standIn.stop();
    await ctx.db.close();
    process.exit(0);
  })();
});
