// The typed client against the real service on a real socket: answers and ApiError, User-Agent and
// Authorization, retries of 429 (a low SERVICE_THROTTLE_USER) and 503, the Idempotency-Key kept across
// a retry (one invitation, one e-mail), and pagination of page-number and cursor lists.
// (Teams and suppressions are what is paginated: they are made without hashing a password each.)
//
// 503s come from a small proxy in front of the service that stands for a load balancer: the service
// itself never answers 503 to a request it has handled, and the interesting case (the create went
// through, the answer was lost, the client retries) cannot be produced otherwise.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { sendQueuedMail } from '../../../src/mail/outbox.ts';
import { startApp, type TestApp } from '../../../test/support/app.ts';
import { readMailbox } from '../../../test/mail/eml.ts';
import { ApiError, VERSION, createClient, retryAfterMs } from '../src/index.ts';

const HERE = path.dirname(fileURLToPath(import.meta.url));

/** Records what the client sent, then sends it. */
function recordingFetch() {
  const sent: { method: string; url: string; headers: Headers; status: number }[] = [];
  return {
    sent,
    fetch: async (request: Request) => {
      const response = await fetch(request);
      sent.push({ method: request.method, url: request.url, headers: request.headers, status: response.status });
      return response;
    },
  };
}

interface ProxyRule {
  /** Answers this request itself (after forwarding it when `forward` is true); undefined: pass it through. */
  (req: http.IncomingMessage, count: number): { status: number; retryAfter: string; forward: boolean } | undefined;
}

/** A proxy to `target` that lets `rule` replace answers; every request it saw, with its headers. */
async function startProxy(target: string, rule: ProxyRule) {
  const seen: http.IncomingHttpHeaders[] = [];
  const relay = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    seen.push(req.headers);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const override = rule(req, seen.length);
    if (override && !override.forward) {
      res.writeHead(override.status, { 'Retry-After': override.retryAfter, 'Content-Type': 'text/plain' }).end('busy');
      return;
    }
    const headers = Object.fromEntries(
      Object.entries(req.headers).filter(([name]) => name !== 'host' && name !== 'connection'),
    ) as Record<string, string>;
    const upstream = await fetch(target + req.url, {
      method: req.method,
      headers,
      body: chunks.length ? Buffer.concat(chunks) : undefined,
    });
    const body = Buffer.from(await upstream.arrayBuffer());
    if (override) {
      // The service did the work; its answer is lost on the way back.
      res
        .writeHead(override.status, { 'Retry-After': override.retryAfter, 'Content-Type': 'text/plain' })
        .end('bad gateway day');
      return;
    }
    res.writeHead(upstream.status, Object.fromEntries(upstream.headers)).end(body);
  };
  const server = http.createServer((req, res) => void relay(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('svc-client against the service', () => {
  let t: TestApp;
  let base: string;
  let owner: { id: number; email: string };
  let token: string;

  before(async () => {
    t = await startApp({ SERVICE_THROTTLE_USER: '4/second' });
    base = await t.listen();
    owner = await t.user();
    token = await t.token(owner.id, []);
  });
  after(() => t?.close());

  it('VERSION is the package version', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(HERE, '../package.json'), 'utf8'));
    assert.equal(VERSION, pkg.version);
  });

  it('answers the data; sends the bearer token and User-Agent svc-client/<version>', async () => {
    const recorder = recordingFetch();
    const client = createClient({ baseUrl: base, token, fetch: recorder.fetch });
    const me = await client.GET('/api/v1/me/');
    assert.equal(me.email, owner.email);
    assert.equal(recorder.sent[0].headers.get('authorization'), `Bearer ${token}`);
    assert.equal(recorder.sent[0].headers.get('user-agent'), `svc-client/${VERSION}`);
    const team = await client.POST('/api/v1/teams/', { body: { name: 'Typed Team' } });
    assert.equal(team.name, 'Typed Team');
    assert.match(recorder.sent[1].headers.get('idempotency-key') ?? '', /^[0-9a-f-]{36}$/, 'every POST carries a key');
    const removed = await client
      .DELETE('/api/v1/teams/{team_id}/invitations/{id}/', {
        params: { path: { team_id: team.id, id: '00000000-0000-4000-8000-000000000000' } },
      })
      .catch((error) => error);
    assert.ok(removed instanceof ApiError);
    assert.equal(removed.status, 404);
  });

  it('a non-2xx answer is an ApiError with the problem details and the request id', async () => {
    const client = createClient({ baseUrl: base, token });
    const error = await client.POST('/api/v1/teams/', { body: { name: '' } }).catch((e) => e);
    assert.ok(error instanceof ApiError);
    assert.equal(error.status, 400);
    assert.equal(error.title, 'Bad Request');
    assert.match(error.detail, /invalid/i);
    assert.ok(
      error.errors.some((e) => e.field === 'name'),
      JSON.stringify(error.errors),
    );
    assert.match(error.type, /^(about:blank|https?:)/);
    assert.equal(error.requestId, error.response.headers.get('x-request-id'));
    assert.match(error.requestId ?? '', /^[0-9a-f-]{36}$/);

    const anonymous = createClient({ baseUrl: base });
    const refused = await anonymous.GET('/api/v1/me/').catch((e) => e);
    assert.ok(refused instanceof ApiError);
    assert.equal(refused.status, 401);
  });

  it('429: waits Retry-After and retries, so a burst over the limit still succeeds', async () => {
    const user = await t.user();
    const recorder = recordingFetch();
    const client = createClient({ baseUrl: base, token: await t.token(user.id, []), fetch: recorder.fetch });
    const answers = [];
    for (let i = 0; i < 7; i++) answers.push(await client.GET('/api/v1/me/'));
    assert.equal(answers.length, 7);
    assert.ok(answers.every((me) => me.email === user.email));
    const statuses = recorder.sent.map((s) => s.status);
    assert.ok(statuses.includes(429), `the limit was hit: ${statuses.join(',')}`);
    assert.equal(statuses.filter((s) => s === 200).length, 7);
  });

  it('429 with a Retry-After past the bound is answered at once, not waited for', async () => {
    const user = await t.user();
    const client = createClient({ baseUrl: base, token: await t.token(user.id, []), maxRetryDelayMs: 0 });
    const results = await Promise.all(
      Array.from({ length: 6 }, () =>
        client.GET('/api/v1/me/').then(
          () => 'ok',
          (e) => e,
        ),
      ),
    );
    const throttled = results.filter((r) => r instanceof ApiError);
    assert.ok(throttled.length >= 1, 'some were throttled');
    assert.equal(throttled[0].status, 429);
    assert.match(throttled[0].detail, /^Request was throttled\. Expected available in \d+ seconds?\.$/);
  });

  it('503: retried at most 3 times, then an ApiError', async () => {
    const proxy = await startProxy(base, () => ({ status: 503, retryAfter: '0', forward: false }));
    try {
      const client = createClient({ baseUrl: proxy.url, token });
      const error = await client.GET('/api/v1/me/').catch((e) => e);
      assert.ok(error instanceof ApiError);
      assert.equal(error.status, 503);
      assert.equal(proxy.seen.length, 4, 'the first attempt and 3 retries');
    } finally {
      await proxy.close();
    }
  });

  it('a create whose answer was lost is retried with the same Idempotency-Key: one invitation, one e-mail', async () => {
    const team = await t.team(owner.id, 'Idempotent Team');
    // The first POST reaches the service, which creates the invitation; the proxy answers 503 instead.
    const proxy = await startProxy(base, (req, count) =>
      req.method === 'POST' && count === 1 ? { status: 503, retryAfter: '1', forward: true } : undefined,
    );
    try {
      const client = createClient({ baseUrl: proxy.url, token });
      const invitation = await client.POST('/api/v1/teams/{team_id}/invitations/', {
        params: { path: { team_id: team.id } },
        body: { email: 'once@example.org', role: 'member' },
      });
      assert.equal(invitation.email, 'once@example.org');
      assert.equal(proxy.seen.length, 2);
      const keys = proxy.seen.map((headers) => headers['idempotency-key']);
      assert.match(String(keys[0]), /^[0-9a-f-]{36}$/);
      assert.equal(keys[1], keys[0], 'the retry carries the same key');
      const rows = await t.ctx.db.kysely
        .selectFrom('invitations')
        .select('id')
        .where('team_id', '=', team.id)
        .where('email', '=', 'once@example.org')
        .execute();
      assert.deepEqual(
        rows.map((r) => r.id),
        [invitation.id],
        'exactly one invitation, the one answered',
      );
      await sendQueuedMail(t.ctx);
      assert.equal(
        readMailbox(t.env.SERVICE_DATA_DIR).filter((m) => m.headers.get('to')?.includes('once@example.org')).length,
        1,
      );
    } finally {
      await proxy.close();
    }
  });

  it("paginate walks a page-number list to the end (following next on the client's own origin)", async () => {
    const member = await t.user();
    for (let i = 0; i < 53; i++) await t.team(member.id, `Team ${String(i).padStart(2, '0')}`);
    const client = createClient({ baseUrl: base, token: await t.token(member.id, []) });
    const teams = [];
    for await (const team of client.paginate('/api/v1/teams/')) teams.push(team);
    assert.deepEqual(
      teams.map((team) => team.name),
      Array.from({ length: 53 }, (_, i) => `Team ${String(i).padStart(2, '0')}`),
      "every team once, in the API's order",
    );
    const pages = [];
    for await (const page of client.pages('/api/v1/teams/')) pages.push(page);
    assert.deepEqual(
      pages.map((p) => [p.count, p.results.length]),
      [
        [53, 50],
        [53, 3],
      ],
    );
    // The service's links name BASE_URL (http://testserver here), which this client cannot reach.
    assert.match(pages[0].next ?? '', /^http:\/\/testserver\//);
  });

  it('paginate walks a cursor list to the end', async () => {
    const staff = await t.user({ staff: true });
    const client = createClient({ baseUrl: base, token: await t.token(staff.id, ['admin']) });
    for (let i = 0; i < 5; i++) {
      const at = `2026-01-0${i + 1}T00:00:00.000Z`;
      await t.ctx.db.kysely
        .insertInto('mail_suppressions')
        .values({
          email: `s${i}@example.com`,
          reason: 'bounce',
          event_key: `evt-s${i}`,
          occurred_at: at,
          created_at: at,
          released_at: null,
        })
        .execute();
    }
    const emails = [];
    for await (const entry of client.paginate('/api/v1/admin/suppressions/', { params: { query: { page_size: '2' } } }))
      emails.push(entry.email);
    assert.deepEqual(emails, [
      's4@example.com',
      's3@example.com',
      's2@example.com',
      's1@example.com',
      's0@example.com',
    ]);
  });

  it('Retry-After: seconds or an HTTP date; 1 s when absent', () => {
    assert.equal(retryAfterMs('3'), 3000);
    assert.equal(retryAfterMs(null), 1000);
    assert.equal(retryAfterMs(new Date(Date.now() + 5000).toUTCString(), Date.now()) > 3000, true);
  });
});
