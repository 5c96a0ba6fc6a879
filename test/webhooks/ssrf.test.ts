// The SSRF guard, end to end: hostile URLs are refused at creation (400 that says why), hostile DNS
// answers (served by a local DNS responder the service is pointed at) are refused at creation, and a
// name that turns private after creation is refused at the attempt, before any connection.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bearer } from '../support/app.ts';
import { startDnsServer, type DnsServer } from '../support/dns-server.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { webhookFixture, type WebhookFixture } from './setup.ts';
import { eventually } from '../support/wait.ts';

const PUBLIC = '93.184.216.34';

const HOSTILE_URLS: [string, RegExp][] = [
  ['https://127.0.0.1/hook', /loopback/],
  ['https://127.1/hook', /loopback/],
  ['https://2130706433/hook', /loopback/],
  ['https://0x7f000001/hook', /loopback/],
  ['https://0177.0.0.1/hook', /loopback/],
  ['https://0x7f.0.0.1/hook', /loopback/],
  ['https://017700000001/hook', /loopback/],
  ['https://0x7f.1/hook', /loopback/],
  ['https://127.0.0.1:8443/hook', /loopback/],
  ['https://10.0.0.1/hook', /private/],
  ['https://012.0.0.1/hook', /private/],
  ['https://167772161/hook', /private/],
  ['https://172.16.0.1/hook', /private/],
  ['https://172.31.255.255/hook', /private/],
  ['https://192.168.0.1/hook', /private/],
  ['https://0xc0a80001/hook', /private/],
  ['https://169.254.169.254/latest/meta-data/', /linkLocal/],
  ['https://100.64.0.1/hook', /carrierGradeNat/],
  ['https://0.0.0.0/hook', /unspecified/],
  ['https://0/hook', /unspecified/],
  ['https://224.0.0.1/hook', /multicast/],
  ['https://255.255.255.255/hook', /broadcast/],
  ['https://192.0.2.1/hook', /reserved/],
  ['https://198.51.100.7/hook', /reserved/],
  ['https://203.0.113.9/hook', /reserved/],
  ['https://240.0.0.1/hook', /reserved/],
  ['https://198.18.0.1/hook', /reserved/],
  ['https://[::1]/hook', /loopback/],
  ['https://[::]/hook', /unspecified/],
  ['https://[::ffff:127.0.0.1]/hook', /loopback/],
  ['https://[::ffff:7f00:1]/hook', /loopback/],
  ['https://[::ffff:10.0.0.1]/hook', /private/],
  ['https://[::ffff:a9fe:a9fe]/hook', /linkLocal/],
  ['https://[::127.0.0.1]/hook', /IPv4-compatible/],
  ['https://[64:ff9b::7f00:1]/hook', /rfc6052/],
  ['https://[64:ff9b::a00:1]/hook', /rfc6052/],
  ['https://[64:ff9b:1::a00:1]/hook', /rfc6052/],
  ['https://[2002:7f00:1::]/hook', /6to4/],
  ['https://[fc00::1]/hook', /uniqueLocal/],
  ['https://[fd12:3456::1]/hook', /uniqueLocal/],
  ['https://[fe80::1]/hook', /linkLocal/],
  ['https://[ff02::1]/hook', /multicast/],
  ['https://[2001:db8::1]/hook', /reserved/],
  ['https://localhost/hook', /localhost/],
  ['https://LOCALHOST./hook', /localhost/],
  ['https://api.localhost/hook', /localhost/],
  ['https://intranet/hook', /fully qualified/],
];

const HOSTILE_DNS: [string, { A?: string[]; AAAA?: string[] }, RegExp][] = [
  ['private-a.example.test', { A: ['10.1.2.3'] }, /10\.1\.2\.3.*private/],
  ['loop.example.test', { A: ['127.0.0.1'] }, /loopback/],
  ['meta.example.test', { A: ['169.254.169.254'] }, /linkLocal/],
  ['mixed.example.test', { A: [PUBLIC, '10.0.0.5'] }, /10\.0\.0\.5/],
  ['cgnat.example.test', { A: ['100.100.1.1'] }, /carrierGradeNat/],
  ['zero.example.test', { A: ['0.0.0.0'] }, /unspecified/],
  ['v6loop.example.test', { AAAA: ['::1'] }, /loopback/],
  ['v6ula.example.test', { AAAA: ['fd00::1'] }, /uniqueLocal/],
  ['v6mapped.example.test', { AAAA: ['::ffff:192.168.1.1'] }, /private/],
  ['v6nat64.example.test', { AAAA: ['64:ff9b::a9fe:a9fe'] }, /rfc6052/],
  ['mixed6.example.test', { A: [PUBLIC], AAAA: ['fe80::1'] }, /linkLocal/],
  ['empty.example.test', {}, /does not resolve/],
  ['nxdomain.example.test', { A: ['__none__'] }, /does not resolve/],
];

describe('SSRF guard', () => {
  let dns: DnsServer;
  let f: WebhookFixture;
  let receiver: Receiver;
  before(async () => {
    dns = await startDnsServer();
    for (const [name, records] of HOSTILE_DNS) if (!records.A?.includes('__none__')) dns.records.set(name, records);
    // Only 127.0.0.2 is let through (the receiver's address); 127.0.0.1 stays refused.
    f = await webhookFixture({ SERVICE_WEBHOOKS_ALLOWED_CIDRS: '127.0.0.2/32', SERVICE_DNS_SERVERS: dns.address });
    receiver = await startReceiver('127.0.0.2');
    await f.startWorker();
  });
  after(async () => {
    await f.close();
    await receiver.close();
    await dns.close();
  });

  it(`refuses ${HOSTILE_URLS.length} hostile literal URLs and ${HOSTILE_DNS.length} hostile DNS answers at creation`, async () => {
    assert.ok(HOSTILE_URLS.length + HOSTILE_DNS.length >= 40);
    const cases: [string, RegExp][] = [
      ...HOSTILE_URLS,
      ...HOSTILE_DNS.map(([name, , why]) => [`https://${name}/hook`, why] as [string, RegExp]),
    ];
    const failures: string[] = [];
    for (const [url, why] of cases) {
      const res = await f.t.inject({
        method: 'POST',
        url: `/api/v1/teams/${f.teamId}/webhooks/`,
        headers: bearer(f.token),
        payload: { url, events: ['*'] },
      });
      const detail = res.json().detail as string;
      if (res.statusCode !== 400 || !why.test(detail)) failures.push(`${url}: ${res.statusCode} ${detail}`);
    }
    assert.deepEqual(failures, []);
    const { n } = await f.t.ctx.db.kysely
      .selectFrom('webhook_subscriptions')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    assert.equal(Number(n), 0);
    // The resolver asked our DNS server (SERVICE_DNS_SERVERS), for both address families.
    assert.ok(dns.queries.includes('private-a.example.test A') && dns.queries.includes('v6loop.example.test AAAA'));
  });

  it('refuses the same hostile URLs on PATCH', async () => {
    dns.records.set('ok.example.test', { A: ['127.0.0.2'] });
    const sub = await f.createSubscription(`https://ok.example.test:${receiver.port}/hook`);
    for (const [url] of [...HOSTILE_URLS.slice(0, 10), ['https://loop.example.test/x']]) {
      const res = await f.t.inject({
        method: 'PATCH',
        url: `/api/v1/teams/${f.teamId}/webhooks/${sub.id}/`,
        headers: bearer(f.token),
        payload: { url },
      });
      assert.equal(res.statusCode, 400, `${url}: ${res.body}`);
    }
    await f.t.inject({
      method: 'DELETE',
      url: `/api/v1/teams/${f.teamId}/webhooks/${sub.id}/`,
      headers: bearer(f.token),
    });
  });

  it('delivers to a name resolving to an allowed address, with SNI and the certificate checked for that name', async () => {
    dns.records.set('hooks.example.test', { A: ['127.0.0.2'] });
    const sub = await f.createSubscription(`https://hooks.example.test:${receiver.port}/hook`);
    const before = receiver.received.length;
    await f.emit('team.member.added', { user_id: 1, email: 'a@example.com', role: 'member' });
    const got = await receiver.waitFor(before + 1);
    assert.equal(got.at(-1)!.headers.host, `hooks.example.test:${receiver.port}`);
    const rows = await eventually(async () => {
      const r = await f.deliveries(sub.id);
      return r[0]?.status === 'success' && r;
    });
    assert.equal(rows[0].status_code, 200);
    await f.t.inject({
      method: 'DELETE',
      url: `/api/v1/teams/${f.teamId}/webhooks/${sub.id}/`,
      headers: bearer(f.token),
    });
  });

  it('a name missing from the certificate fails TLS verification (the check is not bypassed by pinning)', async () => {
    dns.records.set('not-in-cert.example.test', { A: ['127.0.0.2'] });
    const sub = await f.createSubscription(`https://not-in-cert.example.test:${receiver.port}/hook`);
    const before = receiver.received.length;
    await f.emit('team.member.added', { user_id: 1, email: 'a@example.com', role: 'member' });
    const rows = await eventually(async () => {
      const r = await f.deliveries(sub.id);
      return r[0] && r[0].status !== 'pending' && r;
    });
    assert.equal(rows[0].status, 'failed');
    assert.equal(rows[0].status_code, null);
    assert.match(rows[0].response_body!, /ERR_TLS_CERT_ALTNAME_INVALID|altnames/i);
    assert.equal(receiver.received.length, before);
    await f.t.inject({
      method: 'DELETE',
      url: `/api/v1/teams/${f.teamId}/webhooks/${sub.id}/`,
      headers: bearer(f.token),
    });
  });

  it('a name that resolves public at creation and private at delivery is refused at the attempt, before connecting', async () => {
    dns.records.set('rebind.example.test', { A: [PUBLIC] });
    const sub = await f.createSubscription(`https://rebind.example.test:${receiver.port}/hook`);
    for (const target of [
      { A: ['10.0.0.7'] },
      { A: ['127.0.0.1'] },
      { AAAA: ['::ffff:169.254.169.254'] },
      { A: ['127.0.0.2', '192.168.1.1'] },
    ]) {
      dns.records.set('rebind.example.test', target);
      const before = receiver.received.length;
      const countBefore = (await f.deliveries(sub.id)).length;
      dns.queries.length = 0;
      await f.emit('team.member.added', { user_id: 1, email: 'a@example.com', role: 'member' });
      const rows = await eventually(async () => {
        const r = await f.deliveries(sub.id);
        return r.length > countBefore && r[countBefore].status !== 'pending' && r;
      });
      const row = rows[countBefore];
      assert.equal(row.status, 'failed', JSON.stringify(target));
      assert.equal(row.status_code, null);
      assert.match(row.response_body!, /Refused by the SSRF guard/);
      assert.ok(
        dns.queries.some((q) => q.startsWith('rebind.example.test')),
        'resolved again at the attempt',
      );
      assert.equal(receiver.received.length, before, 'no connection was made');
    }
    await f.t.inject({
      method: 'DELETE',
      url: `/api/v1/teams/${f.teamId}/webhooks/${sub.id}/`,
      headers: bearer(f.token),
    });
  });
});
