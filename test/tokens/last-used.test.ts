// A token's last_used_at as a client (the token list, `svc token list`) and the database see it:
// written with the use's own time, at most once a minute, in batches that reach the database within
// about a second, and by the app's close for uses still waiting.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { onTableWrite } from '../../src/db/write-watch.ts';
import { FLUSH_EVERY_MS, LastUsedWriter } from '../../src/tokens/last-used.ts';
import { createPat } from '../../src/tokens/pats.ts';
import { bearer, startApp, type TestApp } from '../support/app.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('PAT last_used_at', () => {
  let t: TestApp;
  let userId: number;
  before(async () => {
    t = await startApp();
    userId = (await t.user()).id;
  });
  after(() => t.close());

  const newToken = (name = 'tracked') => createPat(t.ctx.db.kysely, { userId, name, scopes: [], expiresAt: null });
  const me = (token: string) => t.inject({ url: '/api/v1/me/', headers: bearer(token) });
  const lastUsed = async (ids: number[]) =>
    new Map(
      (
        await t.ctx.db.kysely
          .selectFrom('personal_access_tokens')
          .select(['id', 'last_used_at'])
          .where('id', 'in', ids)
          .execute()
      ).map((row) => [row.id, row.last_used_at] as const),
    );
  const waitForAll = async (ids: number[]) => {
    for (let i = 0; i < 300; i++) {
      const seen = await lastUsed(ids);
      if ([...seen.values()].every((value) => value !== null)) return seen;
      await sleep(10);
    }
    assert.fail('last_used_at was not written within 3 s');
  };

  // Counts the UPDATEs of last_used_at sent while `run` runs. Each write is reported to listeners
  // twice (before it runs and when it returns), so reports are halved.
  const countUpdates = async (run: () => Promise<void>) => {
    let reports = 0;
    const stop = onTableWrite((table, columns) => {
      if (table === 'personal_access_tokens' && String(columns) === 'last_used_at') reports++;
    });
    try {
      await run();
    } finally {
      stop();
    }
    return reports / 2;
  };

  it('tokens used together are written together, each with its own use time', async () => {
    const tokens = await Promise.all(Array.from({ length: 450 }, (_, i) => newToken(`fleet ${i}`)));
    const usedAt = new Map<number, [number, number]>();
    let elapsed = 0;
    const statements = await countUpdates(async () => {
      const started = Date.now();
      for (const { id, token } of tokens) {
        const before = Date.now();
        assert.equal((await me(token)).statusCode, 200);
        usedAt.set(id, [before, Date.now()]);
      }
      elapsed = Date.now() - started;
      const written = await waitForAll(tokens.map(({ id }) => id));
      for (const [id, [from, to]] of usedAt) {
        const at = Date.parse(written.get(id)!);
        assert.ok(
          at >= from && at <= to,
          `token ${id}: written ${written.get(id)}, used between ${new Date(from).toISOString()} and ${new Date(to).toISOString()}`,
        );
      }
      await sleep(100);
    });
    // One batch per second the uses spanned (a batch of more than 400 takes two statements), where
    // one write per use would have taken 450.
    const most = Math.ceil(elapsed / FLUSH_EVERY_MS) + 2;
    assert.ok(
      statements >= 2 && statements <= most,
      `${statements} UPDATEs for 450 uses over ${elapsed} ms (at most ${most})`,
    );
  });

  it('a batch takes one statement per 400 tokens, and a token used again within the minute is not in the next', async () => {
    const tokens = await Promise.all(Array.from({ length: 450 }, (_, i) => newToken(`batch ${i}`)));
    const writer = new LastUsedWriter(t.ctx.db.kysely);
    const now = Date.now();
    const first = await countUpdates(async () => {
      for (const { id } of tokens) writer.touch(id, 0, now);
      await writer.flush();
    });
    assert.equal(first, 2);
    const written = await lastUsed(tokens.map(({ id }) => id));
    assert.ok([...written.values()].every((value) => value === new Date(now).toISOString()));
    const again = await countUpdates(async () => {
      for (const { id } of tokens) writer.touch(id, 0, now + 59_000);
      await writer.flush();
    });
    assert.equal(again, 0);
  });

  it('a use within the minute of another process writing the token leaves that write as it is', async () => {
    const { id, token } = await newToken();
    assert.equal((await me(token)).statusCode, 200);
    // Before this process's batch goes out, another writer records a use 10 s ago.
    const other = new Date(Date.now() - 10_000).toISOString();
    await t.ctx.db.kysely
      .updateTable('personal_access_tokens')
      .set({ last_used_at: other })
      .where('id', '=', id)
      .execute();
    await sleep(1_300);
    assert.equal((await lastUsed([id])).get(id), other);
  });

  it('a use still waiting for its batch is written when the app closes', async () => {
    const other = await startApp();
    try {
      const user = await other.user();
      const { id, token } = await createPat(other.ctx.db.kysely, {
        userId: user.id,
        name: 'closing',
        scopes: [],
        expiresAt: null,
      });
      const before = Date.now();
      assert.equal((await other.inject({ url: '/api/v1/me/', headers: bearer(token) })).statusCode, 200);
      await other.app.close();
      const row = await other.ctx.db.kysely
        .selectFrom('personal_access_tokens')
        .select('last_used_at')
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      assert.ok(
        row.last_used_at !== null && Date.parse(row.last_used_at) >= before,
        `last_used_at ${row.last_used_at}`,
      );
    } finally {
      await other.close();
    }
  });
});
