// In-process webhook benchmarks, run as a child of bench/run.ts pinned to the server CPU, against
// an HTTPS POST sink (bench/servers/bare-http.mjs) pinned to the other CPU. One JSON config as the
// argument; one "BENCH_RESULT {json}" line per measurement on stdout.
//   engine          deliveries/s of one worker (the service's own loop) at each concurrency
//   raw             deliveries/s of a bare undici.request POST loop at the same concurrencies,
//                   signed like the engine
//   signing         the engine (one worker, same queue, same receiver) with one and with two
//                   signatures per delivery (a secret rotation's overlap) in alternating windows of
//                   one process: what a signature costs a delivery
//   signing-raw     the same comparison for the raw loop (secondary: signing's share of a bare POST)
//   latency         embedded mode: events emitted at a paced rate while the in-process worker runs;
//                   event committed → the receiver has its first attempt
//   burst           embedded mode: 10,000 events dispatched at once → every first attempt done
//                   (the third such burst of the process; the first, cold, is reported beside it)
//   dispatch        distributed mode: events emitted only; a separate `svc worker` process delivers
import fs from 'node:fs';
import { randomUUID } from 'node:crypto';
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { Agent, request } from 'undici';
import { createUser } from '../../src/accounts/users.ts';
import type { AppContext } from '../../src/app-context.ts';
import { SYSTEM_ACTOR } from '../../src/audit/actor.ts';
import { loadConfig } from '../../src/config.ts';
import { createContext } from '../../src/context.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import type { Executor } from '../../src/db/schema.ts';
import { cliActor } from '../../src/audit/actor.ts';
import { createTeam } from '../../src/teams/teams.ts';
import { webhookDeliveryTask } from '../../src/webhooks/delivery-worker.ts';
import { USER_AGENT } from '../../src/webhooks/http-client.ts';
import { hmacKey, signatureHeader } from '../../src/webhooks/signing.ts';
import { AddressGuard } from '../../src/webhooks/ssrf.ts';
import { createSubscription, rotateSecret } from '../../src/webhooks/subscriptions.ts';
import { startWorker } from '../../src/worker/worker.ts';
import { CpuProbe } from '../lib/proc.ts';
import { seedSql } from '../scale/sql.ts';
import { percentile } from '../lib/stats.ts';

interface Config {
  mode: 'engine' | 'raw' | 'signing' | 'signing-raw' | 'latency' | 'burst' | 'dispatch';
  receiverUrl: string;
  caFile: string;
  concurrencies?: number[];
  seconds: number;
  warmupSeconds: number;
  /** signing: how many signed/unsigned window pairs, and each window's length. */
  pairs?: number;
  windowMs?: number;
  rates?: number[];
  burst?: number;
  /** For the engine: deliveries/s a previous measurement saw, to size the first refill (a refill
   *  that runs dry is retried with twice the rows, which on a large database costs more than the
   *  measurement itself). */
  expectedRate?: number;
  /** For the engine: refill by copying one dispatched event's rows in SQL (copyRefill) rather than
   *  dispatching every event (the scale scenario, where the refill would take longer than what it feeds). */
  copyRefill?: boolean;
  /** For the engine: the receiver's pid and the database's (their CPU is not "other"). */
  serverPids?: number[];
}

const config = JSON.parse(process.argv[2]) as Config;
const ca = fs.readFileSync(config.caFile);
const EVENT_TYPE = 'team.member.added' as const;
const now = () => performance.timeOrigin + performance.now();
// BENCH_CPU_PROFILE=<file>: a V8 CPU profile of the measured window only (not setup, not refills;
// with several rates or concurrencies, the last one's; the burst: the measured, warm burst).
// `npm run bench` sets it from BENCH_CPU_PROFILE_DIR (bench/scenarios/webhook-child.ts).
async function profiled<T>(work: () => Promise<T>): Promise<T> {
  const file = process.env.BENCH_CPU_PROFILE;
  if (!file) return work();
  const { Session } = await import('node:inspector/promises');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  try {
    return await work();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    fs.writeFileSync(file, JSON.stringify(profile));
    session.disconnect();
  }
}
const cpuMs = (usage: NodeJS.CpuUsage) => (usage.user + usage.system) / 1000;
const emit = (line: Record<string, unknown>) => process.stdout.write(`BENCH_RESULT ${JSON.stringify(line)}\n`);

const control = new Agent({ connect: { ca } });
async function receiver(path: string): Promise<unknown> {
  const response = await request(`${config.receiverUrl}${path}`, { dispatcher: control });
  return response.body.json();
}

/** The service side: database, one team and one subscription to the receiver (created once). */
async function setup(): Promise<{ ctx: AppContext; teamId: string; secret: string | null }> {
  const ctx = createContext(loadConfig(process.env));
  await migrateToLatest(ctx.db);
  const url = `${config.receiverUrl}/hook`;
  const existing = await ctx.db.kysely
    .selectFrom('webhook_subscriptions')
    .select(['team_id'])
    .where('url', '=', url)
    .executeTakeFirst();
  if (existing) return { ctx, teamId: existing.team_id, secret: null };
  const ownerId = await createUser(ctx.db.kysely, {
    email: `bench-owner-${randomUUID()}@example.com`,
    password: 'bench password that is long enough',
    verified: true,
  });
  const team = await createTeam(ctx.db.kysely, { name: 'Bench team', ownerId }, cliActor('bench'));
  const { secret } = await createSubscription(
    ctx,
    new AddressGuard(ctx.config.webhooks),
    team.id,
    { url, events: ['*'] },
    cliActor('bench'),
  );
  return { ctx, teamId: team.id, secret };
}

const eventData = (i: number) => ({
  user_id: 1000 + (i % 1000),
  email: `bench-${i % 1000}@example.com`,
  role: 'member' as const,
});

/** Emits one event of the bench team in `trx`, as business code does; returns its id. */
async function emitOne(ctx: AppContext, trx: Executor, teamId: string, i: number): Promise<string> {
  const [event] = await ctx.events.emit(trx, { type: EVENT_TYPE, teamId, data: eventData(i) });
  return event.id;
}

/** Dispatches `count` events in transactions of `perTransaction`, as business code would. */
async function dispatchMany(ctx: AppContext, teamId: string, count: number, perTransaction = 500): Promise<string[]> {
  const ids: string[] = [];
  for (let done = 0; done < count;) {
    const n = Math.min(perTransaction, count - done);
    await ctx.db.kysely.transaction().execute(async (trx) => {
      for (let i = 0; i < n; i++) ids.push(await emitOne(ctx, trx, teamId, done + i));
    });
    done += n;
  }
  return ids;
}

/**
 * `count` due deliveries like dispatchMany's, made faster: one event is dispatched through the
 * service, and the database copies its event and delivery rows under new event ids (payload and all),
 * in one INSERT … SELECT each. What the worker then claims and sends is row for row what a dispatch
 * would have queued; dispatching 20,000 events one by one took ~14 s of a ~60 s scale visit, whose
 * measurement is 3 s.
 */
async function copyRefill(ctx: AppContext, teamId: string, count: number): Promise<void> {
  const [template] = await dispatchMany(ctx, teamId, 1);
  if (count <= 1) return;
  const series = seedSql(ctx.db.dialect).series(count - 1);
  const prefix = `evt_${randomUUID().replaceAll('-', '')}_`;
  const newId = sql`${prefix} || cast(x.i as text)`;
  await ctx.db.kysely.transaction().execute(async (trx) => {
    await sql`insert into events (id, type, api_version, team_id, data, created_at)
      select ${newId}, e.type, e.api_version, e.team_id, e.data, e.created_at
      from events as e, ${sql.raw(series)} as x where e.id = ${template}`.execute(trx);
    await sql`insert into webhook_deliveries (subscription_id, event_id, event_type, payload, attempt, status,
        next_retry_at, status_code, response_body, duration_ms, locked_until, lease_token, created_at)
      select d.subscription_id, ${newId}, d.event_type, replace(d.payload, ${template}, ${newId}), d.attempt, d.status,
        d.next_retry_at, d.status_code, d.response_body, d.duration_ms, d.locked_until, d.lease_token, d.created_at
      from webhook_deliveries as d, ${sql.raw(series)} as x where d.event_id = ${template}`.execute(trx);
  });
}

/**
 * Settles the database after a refill (thousands of rows), before the worker starts, so that the
 * measurement does not pay for the setup's own maintenance: the database's CPU counts as the
 * service's. SQLite: the refill's WAL is copied back into the database file now, not by the
 * checkpoint thread during the measurement, where it would slow the first window after a refill.
 * PostgreSQL: the refill's rows are vacuumed and analysed, and a checkpoint written, now rather
 * than by autovacuum or the checkpointer during the measurement, where either can cut a window's
 * rate several-fold. The deliveries' own WAL and dead rows are still handled while they are measured.
 */
async function settle(ctx: AppContext) {
  if (ctx.db.dialect !== 'postgres') {
    await sql`pragma wal_checkpoint(TRUNCATE)`.execute(ctx.db.kysely);
    return;
  }
  await sql`vacuum (analyze) webhook_deliveries`.execute(ctx.db.kysely);
  await sql`checkpoint`.execute(ctx.db.kysely);
}

async function countRows(ctx: AppContext, statuses: string[]): Promise<number> {
  const row = await ctx.db.kysely
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('status', 'in', statuses as never[])
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Waits until no delivery is pending (a worker is running). */
async function drained(ctx: AppContext, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let pending = await countRows(ctx, ['pending']); pending > 0; pending = await countRows(ctx, ['pending'])) {
    if (Date.now() > deadline) throw new Error(`${pending} deliveries still pending after ${timeoutMs} ms`);
    await sleep(50);
  }
}

async function assertNoFailures(ctx: AppContext) {
  const failed = await countRows(ctx, ['failed', 'dead_letter']);
  if (failed > 0) {
    const sample = await ctx.db.kysely
      .selectFrom('webhook_deliveries')
      .select(['status', 'status_code', 'response_body'])
      .where('status', '<>', 'success')
      .where('status', '<>', 'pending')
      .limit(3)
      .execute();
    throw new Error(`${failed} deliveries failed: ${JSON.stringify(sample)}`);
  }
}

/** Tries before giving up on a measurement whose queue ran dry (each retry plans twice the rows). */
const MAX_TRIES = 4;

async function engine() {
  const { ctx, teamId } = await setup();
  // Deliveries per second to plan the next refill for: the highest rate seen, counted from the
  // worker's start (warm-up included), so a queue that ran dry during the warm-up still raises it.
  let lastRate = config.expectedRate ?? (config.seconds < 2 ? 1000 : 2000);
  for (const concurrency of config.concurrencies!) {
    for (let attempt = 0; ; attempt++) {
      // Enough due rows that the worker never runs dry during the measurement (checked after). After
      // a dry try lastRate is a lower bound (the queue emptied early), hence the wider margin.
      const wanted = Math.max(
        2000,
        Math.ceil(lastRate * (config.seconds + config.warmupSeconds) * 1.5 * (attempt ? 2 : 1)),
      );
      const pending = await countRows(ctx, ['pending']);
      if (pending < wanted) await (config.copyRefill ? copyRefill : dispatchMany)(ctx, teamId, wanted - pending);
      await settle(ctx);
      ctx.config.webhooks.concurrency = concurrency;
      const start = (await receiver('/__count')) as number;
      const started = performance.now();
      const worker = startWorker(ctx, [webhookDeliveryTask({ ca })]);
      await sleep(config.warmupSeconds * 1000);
      const before = (await receiver('/__count')) as number;
      const probe = new CpuProbe(config.serverPids ?? []).start();
      const t0 = performance.now();
      const cpu0 = process.cpuUsage();
      await profiled(() => sleep(config.seconds * 1000));
      const after = (await receiver('/__count')) as number;
      const used = process.cpuUsage(cpu0);
      const seconds = (performance.now() - t0) / 1000;
      const cpu = probe.stop();
      await worker.stop();
      await assertNoFailures(ctx);
      const rate = (after - before) / seconds;
      // (The rate since the worker started ends where `after` was read, not after the worker's stop.)
      lastRate = Math.max(lastRate, rate, (after - start) / ((t0 - started) / 1000 + seconds));
      // A queue that ran dry leaves slots idle: the figure would understate the engine.
      if ((await countRows(ctx, ['pending'])) === 0) {
        if (attempt + 1 < MAX_TRIES) continue;
        throw new Error(`the queue ran dry at concurrency ${concurrency} in each of ${MAX_TRIES} tries`);
      }
      // CPU time of this process per delivery: steadier than the rate on a shared machine.
      emit({
        concurrency,
        rate,
        cpuUsPerDelivery: (used.user + used.system) / (after - before),
        otherCores: cpu.otherCores,
      });
      break;
    }
  }
  await ctx.db.close();
}

/** The raw loop's request: the engine's body, headers and signature, minus everything else it does. */
function rawPoster() {
  const secret = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64');
  const key = hmacKey(secret);
  const payload = JSON.stringify({
    id: `evt_${randomUUID()}`,
    type: EVENT_TYPE,
    api_version: 'v1',
    created_at: new Date().toISOString(),
    team_id: randomUUID(),
    data: eventData(1),
  });
  const url = `${config.receiverUrl}/hook`;
  return async (agent: Agent, signed: boolean) => {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'x-service-event': EVENT_TYPE,
      'x-service-event-id': 'evt_bench',
      'x-service-attempt': '1',
    };
    if (signed) headers['x-service-signature'] = signatureHeader([key], Math.floor(Date.now() / 1000), payload);
    const response = await request(url, { method: 'POST', headers, body: payload, dispatcher: agent });
    await response.body.text();
    if (response.statusCode !== 200) throw new Error(`raw POST → ${response.statusCode}`);
  };
}

/**
 * `concurrency` raw POST loops over one keep-alive Agent, each POST signed when `signed()` says so
 * (read before every POST). completed() counts the POSTs done; stop() ends the loops and the Agent.
 */
function rawLoops(concurrency: number, signed: () => boolean) {
  const post = rawPoster();
  const agent = new Agent({ keepAliveTimeout: 30_000, connect: { ca } });
  let completed = 0;
  let stopping = false;
  const loop = async () => {
    while (!stopping) {
      await post(agent, signed());
      completed++;
    }
  };
  const loops = Array.from({ length: concurrency }, loop);
  return {
    completed: () => completed,
    async stop() {
      stopping = true;
      await Promise.all(loops);
      await agent.close();
    },
  };
}

async function raw() {
  for (const concurrency of config.concurrencies!) {
    const loops = rawLoops(concurrency, () => true);
    await sleep(config.warmupSeconds * 1000);
    const before = loops.completed();
    const probe = new CpuProbe(config.serverPids ?? []).start();
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    await sleep(config.seconds * 1000);
    const used = process.cpuUsage(cpu0);
    const done = loops.completed() - before;
    const rate = done / ((performance.now() - t0) / 1000);
    const cpuUsPerDelivery = (used.user + used.system) / done;
    const cpu = probe.stop();
    await loops.stop();
    emit({ concurrency, rate, cpuUsPerDelivery, otherCores: cpu.otherCores });
  }
}

interface SigningWindow {
  /** Raw loop: signed or not. Engine: two signatures per delivery (a rotation's overlap) or one. */
  signed: boolean;
  n: number;
  ms: number;
  cpuUs: number;
}

/**
 * Signed and unsigned in alternating windows of one process, over the same connections, so that
 * process placement, JIT state and the neighbours' load weigh on both alike (two processes
 * measured one after the other differ by more than signing costs). `setSigned` switches the sender,
 * `count` says how many deliveries have arrived, `between` runs outside the windows (refills).
 */
async function alternate(
  setSigned: (signed: boolean) => void | Promise<void>,
  count: () => Promise<number>,
  between: (windows: SigningWindow[]) => Promise<void>,
): Promise<SigningWindow[]> {
  const windows: SigningWindow[] = [];
  for (let i = 0; i < 2 * config.pairs!; i++) {
    if (i % 2 === 0) await between(windows);
    // Alternate which mode goes first in a pair, so neither always follows the other.
    const signed = i % 4 === 0 || i % 4 === 3;
    await setSigned(signed);
    // A short settling pause: attempts started under the other mode arrive before the window opens.
    await sleep(20);
    const before = await count();
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    await sleep(config.windowMs!);
    const used = process.cpuUsage(cpu0);
    const n = (await count()) - before;
    windows.push({ signed, n, ms: performance.now() - t0, cpuUs: used.user + used.system });
  }
  return windows;
}

/**
 * Per mode: deliveries per second of wall time, and CPU time of this process per delivery; the
 * sender is CPU-bound, so the CPU ratio is the rate ratio a busy worker sees, without the noise of
 * the receiver's share of the machine. Per pair, then the median over pairs: a burst of the
 * neighbours' load spoils a pair, not the figure.
 */
function emitSigning(concurrency: number, windows: SigningWindow[], otherCores: number, doubled: boolean) {
  // Per delivery: µs of CPU and ms of wall time, signed and unsigned. Doubled (the engine): the
  // `signed` windows carry two signatures and the others one, so one signature costs the
  // difference and an unsigned delivery costs one signature less than a signed one.
  const costs = (a: SigningWindow, b: SigningWindow) => {
    const [s, u] = a.signed ? [a, b] : [b, a];
    const signed = { cpu: s.cpuUs / s.n, time: s.ms / s.n };
    const unsigned = { cpu: u.cpuUs / u.n, time: u.ms / u.n };
    if (!doubled) return { signed, unsigned };
    return {
      signed: unsigned,
      unsigned: { cpu: 2 * unsigned.cpu - signed.cpu, time: 2 * unsigned.time - signed.time },
    };
  };
  const pairs = Array.from({ length: config.pairs! }, (_, p) => costs(windows[2 * p], windows[2 * p + 1]));
  const total = (signed: boolean): SigningWindow => {
    const chosen = windows.filter((w) => w.signed === signed);
    return {
      signed,
      n: chosen.reduce((t, w) => t + w.n, 0),
      ms: chosen.reduce((t, w) => t + w.ms, 0),
      cpuUs: chosen.reduce((t, w) => t + w.cpuUs, 0),
    };
  };
  const all = costs(total(true), total(false));
  emit({
    concurrency,
    signedRate: 1000 / all.signed.time,
    unsignedRate: 1000 / all.unsigned.time,
    signedCpuUs: all.signed.cpu,
    unsignedCpuUs: all.unsigned.cpu,
    rateRatio: percentile(
      pairs.map((p) => p.unsigned.time / p.signed.time),
      50,
    ),
    cpuRatio: percentile(
      pairs.map((p) => p.unsigned.cpu / p.signed.cpu),
      50,
    ),
    otherCores,
  });
}

/** The raw POST loop, signed and unsigned (secondary figure: signing against a bare POST). */
async function signingRaw() {
  const concurrency = config.concurrencies![0];
  let signed = true;
  const loops = rawLoops(concurrency, () => signed);
  await sleep(config.warmupSeconds * 1000);
  const probe = new CpuProbe(config.serverPids ?? []).start();
  const windows = await alternate(
    (mode) => void (signed = mode),
    async () => loops.completed(),
    async () => {},
  );
  const cpu = probe.stop();
  await loops.stop();
  emitSigning(concurrency, windows, cpu.otherCores, false);
}

/**
 * What signing costs the delivery engine, which always signs: one worker draining one queue to the
 * receiver, in windows alternating between one signature per delivery and two. Two is what the
 * service sends during a secret rotation's overlap window (the new secret's v1 and the old one's):
 * each switch is a real rotation, with or without overlap, which the worker picks up at its next
 * claim. One signature costs the difference between the two; an unsigned delivery, one signature
 * less. Deliveries are counted at the receiver; the queue is refilled between pairs, outside the
 * windows.
 */
async function signing() {
  const { ctx, teamId } = await setup();
  const concurrency = config.concurrencies![0];
  ctx.config.webhooks.concurrency = concurrency;
  const subscription = await ctx.db.kysely
    .selectFrom('webhook_subscriptions')
    .selectAll()
    .where('team_id', '=', teamId)
    .executeTakeFirstOrThrow();
  const signTwice = async (twice: boolean) => {
    ctx.config.webhooks.secretOverlapHours = twice ? 1 : 0;
    await rotateSecret(ctx, subscription, SYSTEM_ACTOR);
  };
  let rate = 2000;
  // Enough due rows for a pair of windows at the fastest rate seen, twice over.
  const refill = async () => {
    const wanted = Math.ceil((rate * 4 * (config.windowMs! + 20)) / 1000) + 500;
    const pending = await countRows(ctx, ['pending']);
    if (pending < wanted) await dispatchMany(ctx, teamId, 2 * wanted - pending);
  };
  await refill();
  const worker = startWorker(ctx, [webhookDeliveryTask({ ca })]);
  await sleep(config.warmupSeconds * 1000);
  const probe = new CpuProbe(config.serverPids ?? []).start();
  const windows = await alternate(
    signTwice,
    async () => (await receiver('/__count')) as number,
    async (done) => {
      for (const w of done) rate = Math.max(rate, (w.n * 1000) / w.ms);
      await refill();
    },
  );
  const cpu = probe.stop();
  await worker.stop();
  await assertNoFailures(ctx);
  if ((await countRows(ctx, ['pending'])) === 0) throw new Error('the queue ran dry during the signing windows');
  emitSigning(concurrency, windows, cpu.otherCores, true);
  await ctx.db.close();
}

interface Paced {
  /** Event id → commit time. */
  committed: Map<string, number>;
  /** How far the pacer fell behind its schedule at worst (ms): the offered load's own lag. */
  maxBehindMs: number;
}

/**
 * Dispatches at `rate` events/s for `seconds`, one transaction per event, each in its own turn of
 * the event loop, as request handlers emit them. The pause matters: node:sqlite is synchronous and
 * Kysely's promises settle as microtasks, so a pacer that catches up in a loop of awaits never lets
 * the worker read a response or claim a row: after any delay it would run dozens of transactions
 * back to back, and the latency measured would be mostly its own (docs/performance.md, Event →
 * first attempt).
 */
async function paced(ctx: AppContext, teamId: string, rate: number, seconds: number): Promise<Paced> {
  const committed = new Map<string, number>();
  const total = Math.round(rate * seconds);
  const start = performance.now();
  let maxBehindMs = 0;
  for (let i = 0; i < total; i++) {
    const scheduled = start + (i / rate) * 1000;
    const wait = scheduled - performance.now();
    if (wait > 0) await sleep(wait);
    else {
      maxBehindMs = Math.max(maxBehindMs, -wait);
      await nextTurn();
    }
    const id = await ctx.db.kysely.transaction().execute((trx) => emitOne(ctx, trx, teamId, i));
    committed.set(id, now());
  }
  return { committed, maxBehindMs };
}

/** Waits until the receiver has every event; returns per-event latency (ms) from commit to arrival. */
async function arrivals(
  committed: Map<string, number>,
  timeoutMs: number,
): Promise<{ latencies: number[]; lastArrival: number }> {
  const seen = new Map<string, number>();
  const deadline = Date.now() + timeoutMs;
  while (seen.size < committed.size) {
    for (const [id, at] of Object.entries((await receiver('/__events')) as Record<string, number>))
      if (committed.has(id)) seen.set(id, at);
    if (seen.size >= committed.size) break;
    if (Date.now() > deadline)
      throw new Error(`only ${seen.size} of ${committed.size} events arrived within ${timeoutMs} ms`);
    await sleep(20);
  }
  const latencies = [...committed].map(([id, at]) => seen.get(id)! - at);
  return { latencies, lastArrival: Math.max(...seen.values()) };
}

const summary = (latencies: number[]) => ({
  events: latencies.length,
  p50Ms: percentile(latencies, 50),
  p99Ms: percentile(latencies, 99),
  maxMs: Math.max(...latencies),
});

/** Events/s of the latency process's first warm-up (a measured rate equal to it needs no other). */
const WARMUP_RATE = 100;

async function latency(embedded: boolean) {
  const { ctx, teamId } = await setup();
  const worker = embedded ? startWorker(ctx, [webhookDeliveryTask({ ca })]) : null;
  // Rows an earlier measurement left on the database (the scale scenario's engine leaves a refill's
  // remainder, thousands of rows) are delivered first: the events measured meet an idle worker, not a
  // backlog. (Distributed mode: the separate worker delivers them.)
  await drained(ctx, 120_000);
  await receiver('/__events');
  // Warm-up: connections, JIT, prepared statements.
  await arrivals((await paced(ctx, teamId, WARMUP_RATE, config.warmupSeconds)).committed, 30_000);
  for (const rate of config.rates ?? []) {
    // Warm-up at this rate too (as the throughput figures warm up at each concurrency): a higher
    // rate needs more keep-alive connections to the receiver, and the TLS handshakes that open them
    // (a few ms of CPU each, on the worker's core) are a one-off cost, not the steady state measured.
    if (rate !== WARMUP_RATE) await arrivals((await paced(ctx, teamId, rate, config.warmupSeconds)).committed, 30_000);
    const probe = new CpuProbe(config.serverPids ?? []).start();
    const { latencies, maxBehindMs } = await profiled(async () => {
      const pacing = await paced(ctx, teamId, rate, config.seconds);
      return { ...(await arrivals(pacing.committed, 30_000)), maxBehindMs: pacing.maxBehindMs };
    });
    const cpu = probe.stop();
    emit({ rate, ...summary(latencies), maxBehindMs, otherCores: cpu.otherCores });
  }
  await worker?.stop();
  await assertNoFailures(ctx);
  await ctx.db.close();
}

/**
 * The burst is measured on a warm process, as the throughput figures are after their warm-up at the
 * measured load: bursts of the same size are delivered first, and the last of BURSTS is the figure.
 * The paced warm-up alone (a few hundred events) leaves the JIT cold for the burst's code paths: such
 * a process spends about half as much again CPU per delivery of its first burst as after two, which
 * is near the engine's steady state (docs/performance.md, 10,000-event burst). The first burst, the
 * cold process's, is reported beside the figure.
 */
const BURSTS = 3;

async function burst() {
  const { ctx, teamId } = await setup();
  const worker = startWorker(ctx, [webhookDeliveryTask({ ca })]);
  await receiver('/__events');
  await arrivals((await paced(ctx, teamId, WARMUP_RATE, config.warmupSeconds)).committed, 30_000);
  const runs = [];
  for (let i = 0; i < BURSTS; i++) runs.push(await oneBurst(ctx, teamId, i === BURSTS - 1));
  await worker.stop();
  await assertNoFailures(ctx);
  const attempted = await countRows(ctx, ['success']);
  const [cold, measured] = [runs[0], runs[BURSTS - 1]];
  emit({
    ...measured,
    successRows: attempted,
    coldCompletedMs: cold.completedMs,
    coldDispatchedMs: cold.dispatchedMs,
    coldCpuTotalMs: cold.cpuTotalMs,
  });
  await ctx.db.close();
}

/** One burst: dispatched back to back, timed until its last first attempt has arrived. */
async function oneBurst(ctx: AppContext, teamId: string, profile: boolean) {
  const received0 = (await receiver('/__count')) as number;
  const probe = new CpuProbe(config.serverPids ?? []).start();
  const cpu0 = process.cpuUsage();
  const t0 = now();
  const committed = new Map<string, number>();
  // As a busy API would: many small transactions back to back, the worker running meanwhile.
  let dispatchedMs = 0;
  let cpuAtDispatchedMs = 0;
  let deliveredWhileDispatching = 0;
  const work = async () => {
    for (const id of await dispatchMany(ctx, teamId, config.burst!, 100)) committed.set(id, t0);
    dispatchedMs = now() - t0;
    cpuAtDispatchedMs = cpuMs(process.cpuUsage(cpu0));
    deliveredWhileDispatching = ((await receiver('/__count')) as number) - received0;
    return arrivals(committed, 60_000);
  };
  const { lastArrival } = await (profile ? profiled(work) : work());
  // This process's CPU (event loop and its threads: SQLite checkpoints) until the last arrival was seen.
  const cpuTotalMs = cpuMs(process.cpuUsage(cpu0));
  const cpu = probe.stop();
  return {
    events: committed.size,
    dispatchedMs,
    deliveredWhileDispatching,
    cpuAtDispatchedMs,
    cpuTotalMs,
    completedMs: lastArrival - t0,
    otherCores: cpu.otherCores,
  };
}

try {
  if (config.mode === 'engine') await engine();
  else if (config.mode === 'raw') await raw();
  else if (config.mode === 'signing') await signing();
  else if (config.mode === 'signing-raw') await signingRaw();
  else if (config.mode === 'latency') await latency(true);
  else if (config.mode === 'dispatch') await latency(false);
  else if (config.mode === 'burst') await burst();
  await control.close();
} catch (error) {
  process.stderr.write(`${(error as Error).stack ?? error}\n`);
  process.exit(1);
}
