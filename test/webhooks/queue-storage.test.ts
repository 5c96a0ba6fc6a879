// PostgreSQL: a claim rewrites its rows where they are. webhook_deliveries pages are written up to
// 40% full (migration 0010), so the new versions of a claimed page's rows fit on that page and the
// update is heap-only: no index of the table gets new entries, and the queue stays as cheap to
// walk as its backlog. With full pages each claimed row moved to another page.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { claimDue } from '../../src/webhooks/queue.ts';
import { webhookFixture, type WebhookFixture } from './setup.ts';

const onPostgres = Boolean(process.env.TEST_DATABASE_URL);
const EVENTS = 300;

describe(
  'the delivery queue on PostgreSQL (skipped unless TEST_DATABASE_URL is set)',
  { skip: !onPostgres && 'needs TEST_DATABASE_URL' },
  () => {
    let f: WebhookFixture;
    before(async () => {
      if (onPostgres) f = await webhookFixture();
    });
    after(async () => {
      if (onPostgres) await f.close();
    });

    it('claimed rows stay on their pages and add nothing to the indexes', { skip: !onPostgres }, async () => {
      const db = f.t.ctx.db.kysely;
      // No worker runs: the rows stay pending until this test claims them, and port 9 is never contacted.
      const subscription = await f.createSubscription('https://127.0.0.1:9/hook');
      for (let i = 0; i < EVENTS; i++)
        await f.emit('team.member.added', { user_id: i, email: `u${i}@example.com`, role: 'member' });
      type Place = { id: number; page: string };
      const places = async () =>
        (
          await sql<Place>`select id, (ctid::text::point)[0]::text as page from webhook_deliveries where subscription_id = ${subscription.id} order by id`.execute(
            db,
          )
        ).rows;
      const indexSize = async () =>
        Number(
          (
            await sql<{
              n: string;
            }>`select sum(pg_relation_size(indexrelid))::text as n from pg_index where indrelid = 'webhook_deliveries'::regclass`.execute(
              db,
            )
          ).rows[0].n,
        );
      const written = await places();
      assert.equal(written.length, EVENTS);
      assert.ok(new Set(written.map((p) => p.page)).size > 2, 'the rows span several pages');
      const indexesBefore = await indexSize();

      const claim = await claimDue(f.t.ctx.db, EVENTS, 60);
      assert.equal(claim.rows.length, EVENTS);
      assert.deepEqual(await places(), written, 'every claimed row is still on the page it was written to');
      const leased = await db
        .selectFrom('webhook_deliveries')
        .select('lease_token')
        .where('subscription_id', '=', subscription.id)
        .execute();
      assert.ok(
        leased.every((row) => row.lease_token === claim.rows[0].lease_token),
        'the claim was written',
      );
      assert.equal(await indexSize(), indexesBefore, 'no index grew');
    });

    it('a claim takes at most its limit, however many rows are due', { skip: !onPostgres }, async () => {
      // The test above leaves its rows leased for a minute; these 100 events are due.
      for (let i = 0; i < 100; i++)
        await f.emit('team.member.added', { user_id: i, email: `v${i}@example.com`, role: 'member' });
      const claim = await claimDue(f.t.ctx.db, 25, 60);
      assert.equal(claim.rows.length, 25);
      const leased = await f.t.ctx.db.kysely
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('lease_token', '=', claim.rows[0].lease_token)
        .execute();
      assert.equal(leased.length, 25, 'no row beyond the claim was leased');
      assert.equal((await claimDue(f.t.ctx.db, 25, 60)).rows.length, 25, 'the next claim takes the next 25');
    });
  },
);
