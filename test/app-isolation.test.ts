// Two apps built in one process with different settings keep their state apart: every cache, store
// and lazily built server hangs off each app's own context (src/app-context.ts), never off a module.
// Each check is one that a piece of module-level state would fail: a shared proxy list would count
// a forwarded client wrongly, a shared JWT key cache would let one app accept the other's tokens, a
// shared provider would publish the other's scopes, a shared transport or logger would send or log
// one app's mail through the other.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { SMTPServer } from 'smtp-server';
import { compileDeferredSchemas } from '../src/http/lazy-compilers.ts';
import { intakeNetwork } from '../src/mail/intake.ts';
import { useMailLogger } from '../src/mail/log.ts';
import { queueMail, sendQueuedMail } from '../src/mail/outbox.ts';
import { bearer, startApp, TEST_PASSWORD, type TestApp } from './support/app.ts';
import { readMailbox } from './mail/eml.ts';

describe('two apps in one process share no state', () => {
  let a: TestApp;
  let b: TestApp;
  let smtp: SMTPServer;
  const received: string[] = [];

  before(async () => {
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      onData(stream, session, callback) {
        stream.resume();
        stream.on('end', () => {
          received.push(...session.envelope.rcptTo.map((rcpt) => rcpt.address));
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
    const port = (smtp.server.address() as { port: number }).port;
    // a: behind a trusted proxy, the development file transport, one extra scope.
    a = await startApp({
      SERVICE_TRUSTED_PROXIES: '127.0.0.1',
      SERVICE_THROTTLE_ANON: '10/hour',
      SERVICE_EXTRA_SCOPES: 'read:alpha',
    });
    // b: no trusted proxy, SMTP, another extra scope.
    b = await startApp({
      SERVICE_THROTTLE_ANON: '10/hour',
      SERVICE_EXTRA_SCOPES: 'read:beta',
      SERVICE_EMAIL_URL: `smtp://127.0.0.1:${port}`,
    });
  });
  after(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await new Promise<void>((resolve) => smtp.close(() => resolve()));
  });

  /** X-RateLimit-Remaining of an anonymous API call from the (injected) peer 127.0.0.1 forwarding for `client`. */
  async function remainingFor(t: TestApp, client: string): Promise<number> {
    const res = await t.inject({
      url: '/api/v1/me/',
      remoteAddress: '127.0.0.1',
      headers: { 'x-forwarded-for': client },
    });
    assert.equal(res.statusCode, 401);
    return Number(res.headers['x-ratelimit-remaining']);
  }

  it('each app reads the client address with its own SERVICE_TRUSTED_PROXIES', async () => {
    // a trusts the peer, so each forwarded client has a bucket of its own.
    assert.equal(await remainingFor(a, '203.0.113.1'), 9);
    assert.equal(await remainingFor(a, '203.0.113.2'), 9);
    // b does not: both requests count against the peer's one bucket.
    assert.equal(await remainingFor(b, '203.0.113.1'), 9);
    assert.equal(await remainingFor(b, '203.0.113.2'), 8);
    // And a still does, after b's requests.
    assert.equal(await remainingFor(a, '203.0.113.3'), 9);
  });

  it("each app signs and verifies JWTs with its own keys: one app's token is refused by the other", async () => {
    const userA = await a.user();
    const userB = await b.user();
    // The same user id in both databases, so only the signing key can tell the tokens apart.
    assert.equal(userA.id, userB.id);
    const issue = async (t: TestApp, email: string) => {
      const res = await t.inject({
        method: 'POST',
        url: '/api/auth/token/',
        payload: { email, password: TEST_PASSWORD },
      });
      assert.equal(res.statusCode, 200, res.body);
      return res.json().access as string;
    };
    const tokenA = await issue(a, userA.email);
    const tokenB = await issue(b, userB.email);
    assert.equal((await a.inject({ url: '/api/v1/me/', headers: bearer(tokenA) })).statusCode, 200);
    assert.equal((await b.inject({ url: '/api/v1/me/', headers: bearer(tokenB) })).statusCode, 200);
    // Both caches are warm now; each must still know only its own keys.
    const refused = await b.inject({ url: '/api/v1/me/', headers: bearer(tokenA) });
    assert.equal(refused.statusCode, 401);
    assert.equal(refused.json().detail, 'Invalid, expired or revoked token.');
    assert.equal((await a.inject({ url: '/api/v1/me/', headers: bearer(tokenB) })).statusCode, 401);
    const kids = async (t: TestApp) =>
      ((await t.inject({ url: '/.well-known/jwks.json' })).json().keys as { kid: string }[]).map((key) => key.kid);
    const [kidsA, kidsB] = [await kids(a), await kids(b)];
    assert.equal(kidsA.length, 1);
    assert.equal(kidsB.length, 1);
    assert.notEqual(kidsA[0], kidsB[0]);
  });

  it('each app builds its own OAuth server from its own settings', async () => {
    const scopes = async (t: TestApp) =>
      (await t.inject({ url: '/.well-known/oauth-authorization-server' })).json().scopes_supported as string[];
    const [scopesA, scopesB] = [await scopes(a), await scopes(b)];
    assert.ok(scopesA.includes('read:alpha') && !scopesA.includes('read:beta'), scopesA.join(' '));
    assert.ok(scopesB.includes('read:beta') && !scopesB.includes('read:alpha'), scopesB.join(' '));
    assert.notEqual(a.ctx.oauth, b.ctx.oauth);
  });

  it('each app sends mail through its own transport and logs it with its own logger', async () => {
    const logged: { app: string; msg: string; to?: string[] }[] = [];
    const recorder = (app: string) =>
      pino({ level: 'info' }, { write: (line: string) => void logged.push({ app, ...JSON.parse(line) }) });
    useMailLogger(a.ctx, recorder('a'));
    useMailLogger(b.ctx, recorder('b'));
    await queueMail(a.ctx, a.ctx.db.kysely, { to: 'to-a@example.com', subject: 'From a', text: 'a' });
    await queueMail(b.ctx, b.ctx.db.kysely, { to: 'to-b@example.com', subject: 'From b', text: 'b' });
    // b sends first: its transport is made first, and a must still get its own.
    assert.equal(await sendQueuedMail(b.ctx), 1);
    assert.equal(await sendQueuedMail(a.ctx), 1);
    assert.deepEqual(received, ['to-b@example.com']);
    assert.deepEqual(
      readMailbox(a.env.SERVICE_DATA_DIR).map((mail) => mail.headers.get('subject')),
      ['From a'],
    );
    assert.deepEqual(readMailbox(b.env.SERVICE_DATA_DIR), []);
    assert.deepEqual(
      logged.map(({ app, msg }) => `${app}: ${msg}`),
      ['b: mail sent', 'a: mail written'],
    );
  });

  it('each app has its own SNS intake network settings and schema compilations', () => {
    intakeNetwork(a.ctx).timeoutMs = 1;
    assert.equal(intakeNetwork(b.ctx).timeoutMs, 10_000);
    assert.ok(compileDeferredSchemas(a.app) > 20);
    assert.ok(compileDeferredSchemas(b.app) > 20, "compiling a's schemas compiled none of b's");
  });
});
