// The query plans of every measured path, on a seeded database (a child process of
// bench/scenarios/scale.ts, run after the timings because its purges delete the expired rows). The
// app is built in this process and every request injected (Fastify's inject: the same routes, hooks
// and queries as over a socket), the worker's and the purges' functions are called directly, and
// each statement they run is EXPLAINed (test/support/query-plans.ts). One "BENCH_RESULT {json}" line on stdout:
// path → plans, each with the flags that mark a full scan or a sort.
// Usage: DATABASE_URL=… (the seed's environment) node bench/scale/plans.ts <fixtures.json>
import fs from 'node:fs';
import type { AppContext } from '../../src/app-context.ts';
import { buildApp } from '../../src/app.ts';
import { purgeAccountRows } from '../../src/accounts/housekeeping.ts';
import { purgeAuditEntries } from '../../src/audit/store.ts';
import { loadConfig } from '../../src/config.ts';
import { createContext } from '../../src/context.ts';
import { purgeExpiredIdempotencyKeys } from '../../src/http/idempotency.ts';
import { purgeMailEvents } from '../../src/mail/events-purge.ts';
import { guardBatch } from '../../src/mail/guard.ts';
import { purgeOldMail } from '../../src/mail/outbox.ts';
import { deleteExpiredOAuthRows } from '../../src/oauth/adapter.ts';
import { claimDue, purgeDeliveryLogs } from '../../src/webhooks/queue.ts';
import { writeResults } from '../../src/webhooks/results.ts';
import { captureStatements, explainAll, type Plan } from '../../test/support/query-plans.ts';
import { hasAuditLog } from './audit.ts';
import type { Fixtures } from './fixtures.ts';
import { DEEP_CURSOR_PAGE, DEEP_MEMBER_PAGE } from './pages.ts';

const fixtures = JSON.parse(fs.readFileSync(process.argv[2], 'utf8')) as Fixtures;
const ctx: AppContext = createContext(loadConfig(process.env));
const capture = captureStatements(ctx.db);
const app = await buildApp(ctx);
await app.ready();

async function get(url: string, token: string): Promise<Record<string, unknown>> {
  const response = await app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
  if (response.statusCode !== 200) throw new Error(`GET ${url} → ${response.statusCode}: ${response.body}`);
  return response.json();
}

/** The path of a page link (links are absolute, on BASE_URL). */
const pathOf = (link: string) => {
  const url = new URL(link);
  return url.pathname + url.search;
};

const logUrl = `/api/v1/teams/${fixtures.hooksTeamId}/webhooks/${fixtures.subscriptionId}/logs/`;
const membersUrl = `/api/v1/teams/${fixtures.bigTeamId}/members/`;

const paths: [name: string, run: () => Promise<unknown>, setUp?: () => Promise<void>][] = [
  ['GET /api/v1/me/ (PAT)', () => get('/api/v1/me/', fixtures.pats[0])],
  ['GET /api/v1/me/ (OAuth access token)', () => get('/api/v1/me/', fixtures.oauth[0])],
  ['GET /api/v1/teams/ (a user in 200 teams)', () => get('/api/v1/teams/', fixtures.caller)],
  ['member list, first page', () => get(membersUrl, fixtures.caller)],
  [`member list, page ${DEEP_MEMBER_PAGE}`, () => get(`${membersUrl}?page=${DEEP_MEMBER_PAGE}`, fixtures.caller)],
  ['delivery log, first page', () => get(logUrl, fixtures.caller)],
];

// A log 1,000 pages deep: the link is followed 999 times unrecorded, then recorded.
function deepPage(name: string, first: string) {
  let link = first;
  paths.push([
    `${name}, page ${DEEP_CURSOR_PAGE} (cursor)`,
    () => get(link, fixtures.caller),
    async () => {
      for (let page = 1; page < DEEP_CURSOR_PAGE; page++)
        link = pathOf((await get(link, fixtures.caller)).next as string);
    },
  ]);
}
deepPage('delivery log', logUrl);
const audit = await hasAuditLog(ctx.db.kysely, ctx.db.dialect);
if (audit) {
  const auditUrl = `/api/v1/teams/${fixtures.hooksTeamId}/audit-log/`;
  paths.push(['audit log, first page', () => get(auditUrl, fixtures.caller)]);
  deepPage('audit log', auditUrl);
}

paths.push([
  'event → deliveries → claim → result',
  async () => {
    await ctx.db.kysely.transaction().execute((trx) =>
      ctx.events.emit(trx, {
        type: 'team.member.added',
        teamId: fixtures.hooksTeamId,
        data: { user_id: 1, email: 'x@example.com', role: 'member' },
      }),
    );
    const claim = await claimDue(ctx.db, 32, 60);
    const attemptedAt = new Date().toISOString();
    await writeResults(
      ctx,
      claim.rows.map((delivery) => ({
        delivery,
        statusCode: 200,
        ok: true,
        responseBody: '',
        durationMs: 5,
        attemptedAt,
        attempted: true,
      })),
    );
    if (claim.rows.length === 0) throw new Error('the emitted event made no due delivery (are webhooks enabled?)');
  },
]);
paths.push([
  'pre-send suppression check',
  () =>
    guardBatch(ctx.db.kysely, [
      { to: ['suppressed-7@example.com', 'someone@example.com'], cc: [], bcc: ['other@example.com'] },
    ]),
]);
paths.push(['idempotency purge', () => purgeExpiredIdempotencyKeys(ctx.db.kysely)]);
if (audit) paths.push(['audit log purge', () => purgeAuditEntries(ctx.db.kysely, ctx.config.auditRetentionDays)]);
paths.push(['delivery log purge', () => purgeDeliveryLogs(ctx.db.kysely, ctx.config.webhooks.logRetentionDays)]);
paths.push(['OAuth purge', () => deleteExpiredOAuthRows(ctx.db.kysely)]);
paths.push(['accounts purge', () => purgeAccountRows(ctx)]);
paths.push(['mail outbox purge', () => purgeOldMail(ctx)]);
paths.push(['mail events purge', () => purgeMailEvents(ctx.db.kysely, ctx.config.mailEventsRetentionDays)]);

const result: Record<string, Plan[]> = {};
for (const [name, run, setUp] of paths) {
  if (setUp) await capture.quiet(setUp);
  capture.take();
  await run();
  const statements = capture.take();
  result[name] = await capture.quiet(() => explainAll(ctx.db, statements));
}
process.stdout.write(`BENCH_RESULT ${JSON.stringify(result)}\n`);
await app.close();
await ctx.db.close();
