// Reads and purges whose cost must not grow with the tables around them, checked on their query
// plans (test/support/query-plans.ts): every statement the path runs, as the database would run it.
// A page of a team's members reads the page from an index in its order (no sort of the team), and
// each purge deletes in bounded batches along an index, in a number of statements that does not
// grow with the number of teams or subscriptions. SQLite's plans do not depend on the number of
// rows (the service gathers no statistics); on PostgreSQL the plans are asked with scans and sorts
// priced out, which shows whether an index serves the statement at all.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { purgeAccountRows } from '../../src/accounts/housekeeping.ts';
import { purgeExpiredIdempotencyKeys } from '../../src/http/idempotency.ts';
import { purgeMailEvents } from '../../src/mail/events-purge.ts';
import { purgeOldMail } from '../../src/mail/outbox.ts';
import { deleteExpiredOAuthRows } from '../../src/oauth/adapter.ts';
import { purgeDeliveryLogs } from '../../src/webhooks/queue.ts';
import { bearer, startApp, type TestApp } from '../support/app.ts';
import { captureStatements, explainAll, type Plan, type Statement } from '../support/query-plans.ts';

const OLD = '2020-01-01T00:00:00.000Z';

describe('query plans of reads and purges that must not grow with the tables', () => {
  let t: TestApp;
  let capture: ReturnType<typeof captureStatements>;
  let postgres: boolean;
  before(async () => {
    t = await startApp();
    capture = captureStatements(t.ctx.db);
    postgres = t.ctx.db.dialect === 'postgres';
  });
  after(() => t?.close());

  /** The statements `work` runs, and their plans. */
  async function plansOf(work: () => Promise<unknown>): Promise<{ statements: Statement[]; plans: Plan[] }> {
    capture.take();
    await work();
    const statements = capture.take();
    return { statements, plans: await capture.quiet(() => explainAll(t.ctx.db, statements, { preferIndexes: true })) };
  }

  const find = (plans: Plan[], pattern: RegExp) => {
    const plan = plans.find((p) => pattern.test(p.sql));
    assert.ok(plan, `a statement matching ${pattern} ran: ${plans.map((p) => p.sql).join('\n')}`);
    return plan;
  };

  /** A subscription of `teamId` written straight into its table; its id. */
  async function insertSubscription(teamId: string): Promise<string> {
    const id = randomUUID();
    await t.ctx.db.kysely
      .insertInto('webhook_subscriptions')
      .values({
        id,
        team_id: teamId,
        url: 'https://hooks.example.com/x',
        events: '["*"]',
        secret_encrypted: 'x',
        is_active: 1,
        standard_webhooks: 1,
        consecutive_failures: 0,
        created_at: OLD,
        updated_at: OLD,
      })
      .execute();
    return id;
  }

  /** The plan reads `index` and neither scans a table nor sorts. */
  function assertAlong(plan: Plan, index: string) {
    const text = plan.plan.join('\n');
    assert.ok(text.includes(index), `${plan.sql}\nuses ${index}:\n${text}`);
    assert.deepEqual(plan.flags, [], `${plan.sql}\nneither scans a table nor sorts:\n${text}`);
  }

  it("a page of a team's members is read from the team's index in its order, then joined to its users only", async () => {
    const owner = await t.user();
    const team = await t.team(owner.id);
    for (let i = 0; i < 3; i++) await t.member(team.id, (await t.user()).id, 'member');
    const token = await t.token(owner.id, ['read:teams']);
    const { plans } = await plansOf(async () => {
      const res = await t.inject({ method: 'GET', url: `/api/v1/teams/${team.id}/members/`, headers: bearer(token) });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().count, 4);
    });
    assertAlong(find(plans, /order by "joined_at", "user_id" limit/), 'memberships_team_joined_idx');
    const count = find(plans, /count\(\*\).*"memberships"/);
    assert.doesNotMatch(count.sql, /users/, 'the count reads memberships alone');
    // By cursor, a page past the first seeks its position in the same index, read backwards.
    const first = await t.inject({
      method: 'GET',
      url: `/api/v1/teams/${team.id}/members/?page_size=1`,
      headers: bearer(token),
    });
    const next = new URL(first.json().next);
    const cursor = await plansOf(() =>
      t.inject({ method: 'GET', url: next.pathname + next.search, headers: bearer(token) }),
    );
    assertAlong(find(cursor.plans, /\("m"\."joined_at", "m"\."user_id"\) < /), 'memberships_team_joined_idx');
  });

  it('the delivery log and events purge deletes along time indexes, in statements that do not grow with teams and subscriptions', async () => {
    const owner = await t.user();
    const teams = [];
    for (let i = 0; i < 4; i++) teams.push((await t.team(owner.id)).id);
    const db = t.ctx.db.kysely;
    for (const teamId of teams) {
      const id = await insertSubscription(teamId);
      await db
        .insertInto('webhook_deliveries')
        .values({
          subscription_id: id,
          event_id: `evt_${id}`,
          event_type: 'team.member.added',
          payload: '{}',
          attempt: 1,
          status: 'success',
          created_at: OLD,
        })
        .execute();
      await db
        .insertInto('events')
        .values({
          id: `evt_${id}`,
          type: 'team.member.added',
          api_version: 'v1',
          team_id: teamId,
          data: '{}',
          created_at: OLD,
        })
        .execute();
    }
    const { statements, plans } = await plansOf(async () =>
      assert.deepEqual(await purgeDeliveryLogs(db, 30), { deliveries: 4, events: 4 }),
    );
    const deletes = statements.filter((s) => /^\s*delete/i.test(s.sql));
    assert.equal(
      deletes.length,
      2,
      `one batch of each, whatever the number of teams:\n${statements.map((s) => s.sql).join('\n')}`,
    );
    assertAlong(find(plans, /^delete from "webhook_deliveries"/), 'webhook_deliveries_finished_idx');
    assertAlong(find(plans, /^delete from "events"/), 'events_created_idx');
  });

  it('the OAuth purge deletes in bounded batches along the expiry index', async () => {
    const rows = Array.from({ length: 1_001 }, (_, i) => ({
      model: 'AccessToken',
      id: `old-${i}`,
      payload: '{}',
      expires_at: OLD,
    }));
    for (let i = 0; i < rows.length; i += 250)
      await t.ctx.db.kysely
        .insertInto('oauth_models')
        .values(rows.slice(i, i + 250))
        .execute();
    const { statements, plans } = await plansOf(async () =>
      assert.equal(await deleteExpiredOAuthRows(t.ctx.db.kysely), 1_001),
    );
    const batches = statements.filter((s) => /^delete from "oauth_models"/.test(s.sql));
    assert.equal(batches.length, 2, 'a batch of 1,000, then one of the rest');
    assertAlong(find(plans, /^delete from "oauth_models"/), 'oauth_models_expires_idx');
  });

  it('the idempotency, accounts and mail purges delete in batches along their time indexes', async () => {
    const user = await t.user();
    const db = t.ctx.db.kysely;
    await db
      .insertInto('idempotency_keys')
      .values({
        user_id: user.id,
        method: 'POST',
        path: '/x/',
        idempotency_key: 'k',
        fingerprint: 'f',
        created_at: OLD,
        expires_at: OLD,
      })
      .execute();
    await db
      .insertInto('jwt_refresh_tokens')
      .values({
        token_hash: randomUUID(),
        family_id: 'f',
        user_id: user.id,
        scope: '',
        created_at: OLD,
        expires_at: OLD,
      })
      .execute();
    await db.insertInto('auth_failures').values({ bucket: 'b', created_at: OLD }).execute();
    for (const status of ['sent', 'queued'] as const)
      await db
        .insertInto('mail_outbox')
        .values({
          to_addresses: '["old@example.com"]',
          cc_addresses: '[]',
          bcc_addresses: '[]',
          subject: status,
          body_text: 'x',
          body_html: null,
          status,
          error: null,
          transport_message_id: null,
          locked_until: null,
          created_at: OLD,
          updated_at: OLD,
          sent_at: null,
        })
        .execute();
    const idempotency = await plansOf(async () => assert.equal(await purgeExpiredIdempotencyKeys(db), 1));
    assertAlong(find(idempotency.plans, /^delete from "idempotency_keys"/), 'idempotency_keys_expires_idx');
    const accounts = await plansOf(() => purgeAccountRows(t.ctx));
    assertAlong(find(accounts.plans, /^delete from "sessions"/), 'sessions_expires_idx');
    assertAlong(find(accounts.plans, /^delete from "jwt_refresh_tokens"/), 'jwt_refresh_tokens_expires_idx');
    assertAlong(find(accounts.plans, /^delete from "auth_failures"/), 'auth_failures_created_idx');
    assert.equal(
      await db.selectFrom('jwt_refresh_tokens').select('token_hash').where('user_id', '=', user.id).executeTakeFirst(),
      undefined,
    );
    const mail = await plansOf(async () =>
      assert.equal(await purgeOldMail(t.ctx), 1, 'the sent row, not the queued one'),
    );
    assertAlong(find(mail.plans, /^delete from "mail_outbox"/), 'mail_outbox_finished_idx');
    for (const [key, receivedAt] of [
      ['old', OLD],
      ['new', new Date().toISOString()],
    ])
      await db
        .insertInto('mail_events')
        .values({
          event_key: key,
          sns_message_id: key,
          provider_message_id: null,
          recipient_index: 0,
          email: 'old@example.com',
          event_type: 'delivery',
          bounce_type: null,
          bounce_subtype: null,
          complaint_type: null,
          suppressed: 0,
          occurred_at: receivedAt,
          topic_arn: 'arn:aws:sns:us-east-1:123456789012:ses-events',
          detail: '{}',
          received_at: receivedAt,
        })
        .execute();
    const mailEvents = await plansOf(async () =>
      assert.equal(await purgeMailEvents(db, 90), 1, 'the event received in 2020, not the one received now'),
    );
    assertAlong(find(mailEvents.plans, /^delete from "mail_events"/), 'mail_events_received_idx');
  });

  it("a cursor page's probe for a newer page walks the log's index on the planner's own choice", async () => {
    // The probe needs any one row newer than the page. Unordered, PostgreSQL prices `limit 1` as a table
    // scan that meets a match early: deep in a log most of its rows are newer than the page. But another
    // subscription's rows were written first, and the scan would read all of them before the first match.
    const owner = await t.user();
    const teamId = (await t.team(owner.id)).id;
    const db = t.ctx.db.kysely;
    const [other, ours] = [await insertSubscription(teamId), await insertSubscription(teamId)];
    const rows = (subscriptionId: string, count: number, from: number) =>
      Array.from({ length: count }, (_, i) => ({
        subscription_id: subscriptionId,
        event_id: `evt_${subscriptionId}_${from + i}`,
        event_type: 'team.member.added',
        payload: '{}',
        attempt: 1,
        status: 'success' as const,
        created_at: new Date(Date.parse('2026-01-01T00:00:00.000Z') + (from + i) * 1000).toISOString(),
      }));
    for (let i = 0; i < 3000; i += 500)
      await db
        .insertInto('webhook_deliveries')
        .values(rows(other, 500, i))
        .execute();
    for (let i = 0; i < 3000; i += 500)
      await db
        .insertInto('webhook_deliveries')
        .values(rows(ours, 500, 3000 + i))
        .execute();
    if (postgres) await t.ctx.db.pool!.query('analyze webhook_deliveries');
    const token = await t.token(owner.id, ['read:webhooks']);
    // Ten pages of 200 deep: 1,800 of the log's 3,000 rows are newer than the page.
    let url = `/api/v1/teams/${teamId}/webhooks/${ours}/logs/?page_size=200`;
    for (let page = 1; page < 10; page++) {
      const res = await t.inject({ method: 'GET', url, headers: bearer(token) });
      assert.equal(res.statusCode, 200, res.body);
      const next = new URL(res.json<{ next: string }>().next);
      url = next.pathname + next.search;
    }
    capture.take();
    const deep = await t.inject({ method: 'GET', url, headers: bearer(token) });
    assert.equal(deep.statusCode, 200, deep.body);
    assert.ok(deep.json<{ previous: string | null }>().previous, 'the page links back to the one before');
    const plans = await capture.quiet(() => explainAll(t.ctx.db, capture.take()));
    assertAlong(find(plans, /^select 1 as "one" from "webhook_deliveries"/), 'webhook_deliveries_subscription_idx');
  });

  it("a user's team list is counted and cut from the memberships' index; only the page's teams are read", async () => {
    // A user in 200 teams among 1,500. Reading every one of the user's teams to count and sort them
    // (by name) cost a key probe each, dearer the more teams all tenants have.
    const owner = await t.user();
    const db = t.ctx.db.kysely;
    const teams = Array.from({ length: 1_500 }, (_, i) => ({
      id: randomUUID(),
      name: `Plan team ${String(i).padStart(4, '0')}`,
      slug: `plan-team-${i}-${randomUUID().slice(0, 8)}`,
      is_active: 1,
      created_at: OLD,
      updated_at: OLD,
    }));
    for (let i = 0; i < teams.length; i += 250)
      await db
        .insertInto('teams')
        .values(teams.slice(i, i + 250))
        .execute();
    await db
      .insertInto('memberships')
      .values(
        teams.slice(0, 200).map((team) => ({ team_id: team.id, user_id: owner.id, role: 'member', joined_at: OLD })),
      )
      .execute();
    if (postgres) await t.ctx.db.pool!.query('analyze teams; analyze memberships');
    const token = await t.token(owner.id, ['read:teams']);
    capture.take();
    const res = await t.inject({ method: 'GET', url: '/api/v1/teams/?page=2', headers: bearer(token) });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().count, 200);
    const perPage = res.json().results.length;
    assert.ok(perPage > 0 && perPage < 200, `a page, not the whole list: ${perPage}`);
    assert.equal(res.json().results[0].name, teams[perPage].name, 'the second page starts where the first ends');
    const plans = await capture.quiet(() => explainAll(t.ctx.db, capture.take(), { preferIndexes: true }));
    const count = find(plans, /^select count\(\*\).*from "memberships"/);
    assertAlong(count, 'memberships_user_teams_idx');
    assert.doesNotMatch(count.sql, /"teams"/, `${count.sql}\nthe count reads no team`);
    const page = find(plans, /^select "t"\."id", "t"\."name"/);
    const text = page.plan.join('\n');
    assert.match(text, /memberships_user_teams_idx/, `${page.sql}\nthe page is cut from the index:\n${text}`);
    assert.match(text, postgres ? /teams_pkey/ : /SEARCH t USING INDEX/, `${page.sql}\nprobes the key:\n${text}`);
    const teamsScan = postgres ? /Seq Scan on teams/ : /^SCAN t\b/;
    assert.ok(!page.flags.some((flag) => teamsScan.test(flag)), `${page.sql}\nreads no whole teams table:\n${text}`);
    // The page's order comes from the index, not from sorting the user's memberships.
    assert.ok(
      !page.flags.some((flag) => /Sort|TEMP B-TREE/.test(flag) && /memberships/.test(flag)),
      `${page.sql}\nsorts none of the memberships:\n${text}`,
    );
  });

  it('the plans flag what they should: a table scan and a sort are seen', async () => {
    // The test above would pass on a plan it cannot read: a statement that must scan and sort.
    const { plans } = await plansOf(() =>
      t.ctx.db.kysely.selectFrom('users').select('id').where('first_name', '=', 'x').orderBy('last_name').execute(),
    );
    const [plan] = plans;
    assert.ok(
      plan.flags.some((flag) => (postgres ? /Seq Scan on users/ : /SCAN users/).test(flag)),
      plan.plan.join('\n'),
    );
    assert.ok(
      plan.flags.some((flag) => (postgres ? /Sort/ : /TEMP B-TREE/).test(flag)),
      plan.plan.join('\n'),
    );
  });
});
