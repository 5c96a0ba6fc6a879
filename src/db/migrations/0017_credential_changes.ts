import type { Kysely } from 'kysely';
import { isPostgres, sql } from './helpers.ts';

// SQLite only: credential_changes, one row whose `version` the triggers below raise in every
// transaction that changes a column the PAT cache holds (what src/tokens/pat-resolver.ts's #query
// reads) or deletes a user or a token.
//
// Why: the cache learns of other processes' commits from PRAGMA data_version, which moves on every
// commit by any other connection to any table. A `svc worker` delivering webhooks, or any `svc`
// command, emptied the cache of every `svc serve` on the file many times a second, and each empty cache
// made the next request of every token a lookup. Now data_version only says when to read this row;
// the cache is emptied when the row moved. The triggers fire for every writer, raw SQL from outside the
// service included, so the cache stays as exact as before.
//
// last_used_at is not counted: the resolvers' own bookkeeping writes it, and no identity carries it.
// A later migration that rebuilds either table must create these triggers again
// (test/db/credential-changes.test.ts checks them on the latest schema).
// PostgreSQL needs none of this: writers NOTIFY the tables they wrote (db/write-feed.ts).
const WATCHED = {
  users: ['id', 'email', 'first_name', 'last_name', 'display_name', 'is_staff', 'is_active'],
  personal_access_tokens: ['id', 'user_id', 'token_hash', 'scopes', 'expires_at', 'revoked_at'],
} as const;

const BUMP = 'update credential_changes set version = version + 1;';

export async function up(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) return;
  await sql`create table credential_changes (id integer primary key check (id = 1), version integer not null)`.execute(
    db,
  );
  await sql`insert into credential_changes (id, version) values (1, 0)`.execute(db);
  for (const [table, columns] of Object.entries(WATCHED)) {
    await sql
      .raw(
        `create trigger credential_changes_${table}_update after update of ${columns.join(', ')} on ${table} begin ${BUMP} end`,
      )
      .execute(db);
    await sql
      .raw(`create trigger credential_changes_${table}_delete after delete on ${table} begin ${BUMP} end`)
      .execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) return;
  for (const table of Object.keys(WATCHED)) {
    await sql.raw(`drop trigger credential_changes_${table}_update`).execute(db);
    await sql.raw(`drop trigger credential_changes_${table}_delete`).execute(db);
  }
  await sql`drop table credential_changes`.execute(db);
}
