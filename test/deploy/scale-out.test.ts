// The scale-out shape of docs/deploy.md, with real processes: two `svc serve --no-worker` on their
// own ports and two `svc worker`, on one PostgreSQL schema and one Redis key prefix. What a client
// and a receiver see must not depend on which process answered: one hourly limit per user, one run
// per Idempotency-Key, one delivery per event, and nothing left undelivered when a worker is killed.
// It runs only with PostgreSQL and Redis, the two things such processes share (SQLite is one host's file).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { bearer } from '../support/app.ts';
import { spawnSvc, stop, workerProcessSuite, type Svc } from '../webhooks/processes.ts';
import type { Received, Receiver } from '../support/receiver.ts';
import { eventually } from '../support/wait.ts';

const SHARED = Boolean(process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL);
const SKIP =
  !SHARED &&
  'needs TEST_DATABASE_URL and TEST_REDIS_URL: separate processes share state only through PostgreSQL and Redis';

const USER_LIMIT = 20;
/** Attempts in flight per worker: small, so that two workers' requests are told apart by count. */
const CONCURRENCY = 4;
/** Room for a loaded machine: an attempt that times out is sent again, which would read as a duplicate. */
const TIMEOUT_SECONDS = 8;
/** Long enough for claim-ahead (2 × timeout + 1 s), short enough to wait out in (d). */
const LEASE_SECONDS = 17;
/** Four processes starting at once on a loaded machine take a while. */
const START_TIMEOUT_MS = 60_000;

const eventId = (g: Received) => JSON.parse(g.body).id as string;

/** A promise the receiver holds answers on (Answer.hold) until the test opens it. */
function gate() {
  let open!: () => void;
  const closed = new Promise<void>((resolve) => (open = resolve));
  return { closed, open };
}

/** The receiver's requests from index `start` on that are still waiting for their answer. */
const waiting = (r: Receiver, start: number) =>
  r.received.slice(start).filter((g) => g.answeredAt === undefined && g.hungUpAt === undefined);

/**
 * Waits until the receiver holds 2 × CONCURRENCY requests at once. A worker never has more than
 * CONCURRENCY attempts in flight, and a held request cannot end: so both workers have a full batch out.
 */
const bothWorkersBusy = (r: Receiver, start: number) =>
  eventually(
    async () => waiting(r, start).length === 2 * CONCURRENCY,
    30_000,
    'both workers with a full batch in flight',
  );

describe('scale-out: two `svc serve --no-worker` and two `svc worker` on PostgreSQL + Redis', { skip: SKIP }, () => {
  const servers: Svc[] = [];
  const urls: string[] = [];
  // Declared before the suite's own after() (hooks run in the order declared): a server left
  // running by a failed test stops before the schema is dropped under it.
  after(async () => {
    for (const svc of servers) await stop(svc, 'SIGKILL');
  });
  const suite = workerProcessSuite({
    SERVICE_THROTTLE_USER: `${USER_LIMIT}/hour`,
    SERVICE_WEBHOOKS_CONCURRENCY: String(CONCURRENCY),
    SERVICE_WEBHOOKS_DELIVERY_TIMEOUT: String(TIMEOUT_SECONDS),
    SERVICE_WEBHOOKS_LEASE_SECONDS: String(LEASE_SECONDS),
  });
  const workers: Svc[] = [];

  it(
    'all four start together on one schema and Redis prefix; both servers report live and ready',
    { timeout: 2 * START_TIMEOUT_MS },
    async () => {
      const server = async () => {
        const svc = await spawnSvc(['serve', '--no-worker'], { ...suite.f.t.env, PORT: '0' });
        servers.push(svc);
        const [, url] = await svc.waitForLine(/svc listening on (http:\/\/127\.0\.0\.1:\d+) /, START_TIMEOUT_MS);
        return url;
      };
      const started = await Promise.all([
        server(),
        server(),
        suite.worker(START_TIMEOUT_MS),
        suite.worker(START_TIMEOUT_MS),
      ]);
      urls.push(started[0] as string, started[1] as string);
      workers.push(started[2] as Svc, started[3] as Svc);
      assert.notEqual(urls[0], urls[1]);
      for (const url of urls) {
        for (const probe of ['/healthz', '/readyz']) {
          const res = await fetch(url + probe);
          assert.equal(res.status, 200, `${url}${probe}`);
          assert.deepEqual(await res.json(), { status: 'ok' });
        }
      }
    },
  );

  it(`(a) the per-user hourly limit is shared: ${USER_LIMIT} successes in all, counted down across both servers, then 429 on both`, async () => {
    const { f } = suite;
    const user = await f.t.user();
    const token = await f.t.token(user.id, ['read:profile']);
    const answers = [];
    // Alternating, one at a time: each answer's X-RateLimit-Remaining is the shared count.
    for (let i = 0; i < USER_LIMIT + 4; i++) {
      const res = await fetch(`${urls[i % 2]}/api/v1/me/`, { headers: bearer(token) });
      const body = await res.json();
      answers.push({
        at: Date.now(),
        status: res.status,
        remaining: Number(res.headers.get('x-ratelimit-remaining')),
        limit: Number(res.headers.get('x-ratelimit-limit')),
        reset: Number(res.headers.get('x-ratelimit-reset')),
        retryAfter: res.headers.get('retry-after'),
        body,
      });
    }
    const allowed = answers.slice(0, USER_LIMIT);
    const refused = answers.slice(USER_LIMIT);
    assert.deepEqual(
      allowed.map((a) => a.status),
      Array(USER_LIMIT).fill(200),
    );
    assert.deepEqual(
      allowed.map((a) => a.body.email),
      Array(USER_LIMIT).fill(user.email),
    );
    assert.deepEqual(
      allowed.map((a) => a.remaining),
      Array.from({ length: USER_LIMIT }, (_, i) => USER_LIMIT - 1 - i),
    );
    assert.deepEqual(
      refused.map((a) => a.status),
      [429, 429, 429, 429],
      'refused on both servers',
    );
    for (const a of [...allowed, ...refused]) assert.equal(a.limit, USER_LIMIT);
    for (const a of refused) {
      assert.equal(a.remaining, 0);
      assert.equal(a.body.status, 429);
      assert.match(a.body.detail, /^Request was throttled\. Expected available in \d+ seconds?\.$/);
      assert.ok(Number(a.retryAfter) >= 1 && Number(a.retryAfter) <= 3600, `Retry-After ${a.retryAfter}`);
    }
    // One window for both servers: every answer counts down to the same end (whole seconds, so ±2).
    const ends = answers.map((a) => a.at / 1000 + a.reset);
    assert.ok(
      answers.every((a) => a.reset <= 3600),
      `X-RateLimit-Reset ${answers.map((a) => a.reset)}`,
    );
    assert.ok(Math.max(...ends) - Math.min(...ends) <= 2, `window ends ${ends}`);

    // At once: twice the limit, half to each server, for another user. Exactly the limit succeeds,
    // each success with a remaining count of its own.
    const other = await f.t.user();
    const otherToken = await f.t.token(other.id, ['read:profile']);
    const burst = await Promise.all(
      Array.from({ length: 2 * USER_LIMIT }, async (_, i) => {
        const res = await fetch(`${urls[i % 2]}/api/v1/me/`, { headers: bearer(otherToken) });
        await res.arrayBuffer();
        return { status: res.status, remaining: Number(res.headers.get('x-ratelimit-remaining')) };
      }),
    );
    const ok = burst.filter((b) => b.status === 200);
    assert.equal(ok.length, USER_LIMIT, `statuses ${burst.map((b) => b.status)}`);
    assert.equal(burst.filter((b) => b.status === 429).length, USER_LIMIT);
    assert.deepEqual(
      ok.map((b) => b.remaining).sort((x, y) => x - y),
      Array.from({ length: USER_LIMIT }, (_, i) => i),
    );
  });

  describe('(b) Idempotency-Key across servers', () => {
    const invitations = async () => {
      const { f } = suite;
      const inviter = await f.t.user();
      const team = await f.t.team(inviter.id);
      const token = await f.t.token(inviter.id, ['write:teams']);
      const invite = (url: string, key: string, email: string) =>
        fetch(`${url}/api/v1/teams/${team.id}/invitations/`, {
          method: 'POST',
          headers: { ...bearer(token), 'content-type': 'application/json', 'idempotency-key': key },
          body: JSON.stringify({ email, role: 'member' }),
        });
      /** What the request left behind: invitation rows, queued e-mails and events for the address. */
      const effects = async (email: string) => {
        const db = f.t.ctx.db.kysely;
        const invited = await db
          .selectFrom('invitations')
          .select('id')
          .where('team_id', '=', team.id)
          .where('email', '=', email)
          .execute();
        const mails = await db
          .selectFrom('mail_outbox')
          .select(['id', 'status'])
          .where('to_addresses', '=', JSON.stringify([email]))
          .execute();
        const events = await db
          .selectFrom('events')
          .select('id')
          .where('team_id', '=', team.id)
          .where('type', '=', 'team.invitation.created')
          .where('data', 'like', `%"${email}"%`)
          .execute();
        return { invitations: invited.length, mails, events: events.length };
      };
      return { invite, effects };
    };

    it('sent to one server and replayed on the other: runs once (one invitation, one e-mail, one event); the replay says so', async () => {
      const { invite, effects } = await invitations();
      const email = 'once@example.com';
      const first = await invite(urls[0], 'invite-once', email);
      const firstBody = await first.text();
      assert.equal(first.status, 201, firstBody);
      assert.equal(first.headers.get('idempotency-replay'), null);
      const replay = await invite(urls[1], 'invite-once', email);
      assert.equal(replay.status, 201);
      assert.equal(replay.headers.get('idempotency-replay'), 'true');
      assert.equal(await replay.text(), firstBody, 'the stored answer, byte for byte');
      const after = await effects(email);
      assert.deepEqual({ ...after, mails: after.mails.length }, { invitations: 1, mails: 1, events: 1 });
      // Both workers poll the outbox: the message is sent, and written out once.
      const [mail] = after.mails;
      await eventually(
        async () => (await effects(email)).mails[0].status === 'sent',
        20_000,
        'the invitation e-mail sent',
      );
      const files = fs
        .readdirSync(path.join(suite.f.t.env.SERVICE_DATA_DIR, 'mail'))
        .filter((name) => name.endsWith(`-${String(mail.id).padStart(8, '0')}.eml`));
      assert.equal(files.length, 1, `files ${files}`);
    });

    it('sent to both servers at the same moment: one runs, the other is 409 (in progress) or the replay', async (t) => {
      const { invite, effects } = await invitations();
      const outcomes: string[] = [];
      for (let round = 0; round < 5; round++) {
        const email = `race${round}@example.com`;
        const answers = await Promise.all(
          [0, 1].map(async (i) => {
            const res = await invite(urls[i], `race-${round}`, email);
            return { status: res.status, replay: res.headers.get('idempotency-replay'), body: await res.json() };
          }),
        );
        const ran = answers.filter((a) => a.status === 201 && a.replay === null);
        assert.equal(ran.length, 1, JSON.stringify(answers));
        const [other] = answers.filter((a) => a !== ran[0]);
        outcomes.push(other.status === 201 ? 'replay' : String(other.status));
        if (other.status === 201) {
          assert.equal(other.replay, 'true');
          assert.deepEqual(other.body, ran[0].body);
        } else {
          assert.equal(other.status, 409, JSON.stringify(other));
          assert.equal(
            other.body.detail,
            'A request with this Idempotency-Key is still in progress; retry after it has completed.',
          );
        }
        const after = await effects(email);
        assert.deepEqual(
          { ...after, mails: after.mails.length },
          { invitations: 1, mails: 1, events: 1 },
          `round ${round}`,
        );
      }
      t.diagnostic(`the second request of each round: ${outcomes.join(', ')}`);
    });
  });

  it(
    '(c) 1,000 events reach the receiver exactly once, delivered by both workers, one success each in the log',
    { timeout: 90_000 },
    async () => {
      const { f, r } = suite;
      const team = await f.t.team(f.owner.id);
      const sub = await f.createSubscription(r.url, ['*'], team.id);
      // The first answers wait until both workers have a batch out: both take part.
      const first = gate();
      r.answer = () => ({ hold: first.closed });
      const start = r.received.length;
      const ids = new Set<string>();
      const db = f.t.ctx.db.kysely;
      // In transactions of 50, while both workers run (each commit wakes them through NOTIFY).
      for (let batch = 0; batch < 20; batch++) {
        await db.transaction().execute(async (trx) => {
          for (let i = 0; i < 50; i++) {
            const [event] = await f.t.ctx.events.emit(trx, {
              type: 'team.member.added',
              teamId: team.id,
              data: { user_id: batch * 50 + i, email: `c${i}@example.com`, role: 'member' },
            });
            ids.add(event.id);
          }
        });
        if (batch === 0) {
          await bothWorkersBusy(r, start);
          r.answer = () => ({});
          first.open();
        }
      }
      const rows = await eventually(
        async () => {
          const all = await f.deliveries(sub.id);
          return all.length === ids.size && all.every((row) => row.status === 'success') && all;
        },
        60_000,
        'every delivery written as a success',
      );
      const got = r.received.slice(start);
      const seen = got.map(eventId);
      assert.equal(seen.length, ids.size, 'no event delivered twice');
      assert.deepEqual(new Set(seen), ids, 'every event delivered');
      assert.deepEqual(new Set(rows.map((row) => row.event_id)), ids);
      assert.ok(
        rows.every((row) => row.attempt === 1),
        'one attempt per event',
      );
      for (const w of workers) assert.equal(w.child.exitCode, null, w.output());
    },
  );

  it(
    '(d) a worker killed with SIGKILL mid-batch: after its lease ends every event is delivered; only its in-flight ones twice',
    { timeout: 120_000 },
    async () => {
      const { f, r } = suite;
      const team = await f.t.team(f.owner.id);
      const sub = await f.createSubscription(r.url, ['*'], team.id);
      // The receiver holds every answer until the test releases them (after the kill), so each worker
      // fills its slots and waits there; later answers are immediate.
      const held = gate();
      r.answer = () => ({ hold: held.closed });
      const start = r.received.length;
      const ids = new Set<string>();
      // No row of these can be claimed, so no lease on them can start, before this.
      const queuedFrom = Date.now();
      await f.t.ctx.db.kysely.transaction().execute(async (trx) => {
        for (let i = 0; i < 100; i++)
          ids.add(
            (
              await f.t.ctx.events.emit(trx, {
                type: 'team.member.added',
                teamId: team.id,
                data: { user_id: i, email: `d${i}@example.com`, role: 'member' },
              })
            )[0].id,
          );
      });
      await bothWorkersBusy(r, start);
      // Held requests cannot end: these are each worker's whole batch in flight at the kill.
      const inFlight = waiting(r, start);
      const [victim, survivor] = workers;
      assert.equal((await stop(victim, 'SIGKILL')).signal, 'SIGKILL');
      // The victim's requests end with its connections; then the survivor's are answered.
      const cutOff = await eventually(
        async () => {
          const gone = inFlight.filter((g) => g.hungUpAt !== undefined);
          return gone.length === CONCURRENCY && gone;
        },
        10_000,
        "the killed worker's requests cut off",
      );
      r.answer = () => ({});
      held.open();
      const rows = await eventually(
        async () => {
          const all = await f.deliveries(sub.id);
          return all.length === ids.size && all.every((row) => row.status === 'success') && all;
        },
        (LEASE_SECONDS + 60) * 1000,
        'every event delivered after the lease',
      );
      assert.deepEqual(new Set(rows.map((row) => row.event_id)), ids, 'the log: one row per event, each a success');
      assert.ok(
        rows.every((row) => row.attempt === 1),
        'no attempt failed',
      );

      const all = r.received.slice(start);
      // For a failure's message: each request of the batch in flight, in ms from the first one:
      // received, then answered (a) or cut off (x).
      const t0 = Math.min(...inFlight.map((g) => g.at));
      const story = inFlight
        .map(
          (g) =>
            `${g.at - t0}${g.answeredAt === undefined ? '' : `a${g.answeredAt - t0}`}${g.hungUpAt === undefined ? '' : `x${g.hungUpAt - t0}`}`,
        )
        .join(' ');
      assert.equal(
        inFlight.filter((g) => g.answeredAt !== undefined).length,
        CONCURRENCY,
        `the survivor's batch was answered: ${story}`,
      );
      const cutOffIds = new Set(cutOff.map(eventId));
      const counts = new Map<string, number>();
      for (const g of all) counts.set(eventId(g), (counts.get(eventId(g)) ?? 0) + 1);
      assert.deepEqual(new Set(counts.keys()), ids, 'every event reached the receiver');
      const twice = [...counts].filter(([, n]) => n > 1).map(([id]) => id);
      assert.deepEqual(new Set(twice), cutOffIds, `sent twice: exactly the killed worker’s in-flight events: ${story}`);
      for (const id of cutOffIds) {
        const again = all.filter((g) => eventId(g) === id && g.answeredAt !== undefined);
        assert.equal(again.length, 1, `${id} answered once after the kill: ${story}`);
        assert.ok(
          again[0].at >= queuedFrom + LEASE_SECONDS * 1000,
          `${id} sent again ${again[0].at - queuedFrom} ms after it was queued, before its lease ended: ${story}`,
        );
      }
      assert.equal(survivor.child.exitCode, null, survivor.output());
      const unfinished = await f.t.ctx.db.kysely
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('status', '!=', 'success')
        .execute();
      assert.equal(unfinished.length, 0, 'nothing pending, failed or dead anywhere');
    },
  );

  it('SIGTERM stops each remaining server and worker cleanly (exit 0)', async () => {
    const running = [...servers, ...workers].filter(
      (svc) => svc.child.exitCode === null && svc.child.signalCode === null,
    );
    assert.equal(running.length, 3);
    const exits = await Promise.all(running.map((svc) => stop(svc, 'SIGTERM')));
    assert.deepEqual(
      exits,
      running.map(() => ({ code: 0, signal: null })),
      running.map((svc) => svc.output()).join('\n'),
    );
  });
});
