// SQLite: the PAT cache learns of other connections' changes to credentials from the count that
// migration 0017's triggers keep (src/db/node-sqlite.ts, credentialCounter). A column the resolver
// reads but no trigger watches would let another process's change to it go unseen: this compares the
// resolver's query with the triggers of the latest schema, so a new column, or a migration that
// rebuilds either table without its triggers, fails here.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { startApp, type TestApp } from '../support/app.ts';

const sqlite = !process.env.TEST_DATABASE_URL;

/** The columns src/tokens/pat-resolver.ts selects per table ('t.' tokens, 'u.' users), read from its source. */
function resolverColumns(): Record<string, string[]> {
  const source = fs.readFileSync(new URL('../../src/tokens/pat-resolver.ts', import.meta.url), 'utf8');
  const query = /#query\(\) \{([\s\S]*?)\n  \}/.exec(source)?.[1];
  assert.ok(query, 'the resolver has a #query() method');
  const columns: Record<string, string[]> = { personal_access_tokens: [], users: [] };
  for (const [, alias, column] of query.matchAll(/'([tu])\.(\w+)(?: as \w+)?'/g))
    columns[alias === 't' ? 'personal_access_tokens' : 'users'].push(column);
  return columns;
}

describe('credential change count (SQLite)', { skip: !sqlite && 'SQLite only: PostgreSQL is told by NOTIFY' }, () => {
  let t: TestApp;
  before(async () => {
    t = await startApp();
  });
  after(() => t.close());

  it('every column the PAT resolver reads, but last_used_at, is watched by an update trigger; deletes of either table are counted', async () => {
    const triggers = (
      await sql<{
        name: string;
        sql: string;
      }>`select name, sql from sqlite_master where type = 'trigger' and name like 'credential_changes_%'`.execute(
        t.ctx.db.kysely,
      )
    ).rows;
    const read = resolverColumns();
    assert.ok(
      read.users.includes('is_active') && read.personal_access_tokens.includes('revoked_at'),
      'the query was read',
    );
    for (const [table, columns] of Object.entries(read)) {
      const update = triggers.find((trigger) => trigger.name === `credential_changes_${table}_update`);
      assert.ok(update, `an update trigger on ${table}`);
      const watched = /after update of (.*?) on /i
        .exec(update.sql)![1]
        .split(',')
        .map((c) => c.trim());
      for (const column of columns.filter((c) => c !== 'last_used_at'))
        assert.ok(watched.includes(column), `${table}.${column} is read by the resolver but not watched`);
      assert.ok(!watched.includes('last_used_at'), 'the last-used bookkeeping is not counted');
      assert.ok(
        triggers.some((trigger) => trigger.name === `credential_changes_${table}_delete`),
        `a delete trigger on ${table}`,
      );
    }
  });

  it('counts a change to a watched column, and not one to another column', async () => {
    const count = async () =>
      (await sql<{ version: number }>`select version from credential_changes`.execute(t.ctx.db.kysely)).rows[0].version;
    const user = await t.user();
    const start = await count();
    await sql`update users set updated_at = ${new Date().toISOString()} where id = ${user.id}`.execute(t.ctx.db.kysely);
    assert.equal(await count(), start);
    await sql`update users set display_name = 'Changed' where id = ${user.id}`.execute(t.ctx.db.kysely);
    assert.equal(await count(), start + 1);
  });
});
