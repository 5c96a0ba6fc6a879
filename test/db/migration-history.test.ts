// A database of every earlier release (the first N migrations applied, N = 1 … all but one), started
// with this code, ends with the same schema as a database migrated from nothing: tables, columns,
// defaults, indexes (partial ones included), constraints and storage options, compared as a dump.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { openDb, type Db } from '../../src/db/connection.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { MIGRATIONS } from '../../src/db/migrations/index.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';

const squeeze = (text: string | null) =>
  (text ?? '')
    .replace(/\s+/g, ' ')
    .replace(/\s*([(),])\s*/g, '$1')
    .trim();

/** SQLite: every schema object's SQL, and what PRAGMAs say of each table's columns, indexes and keys. */
async function sqliteSchema(db: Db) {
  const { rows: objects } = await sql<{ type: string; name: string; tbl_name: string; sql: string | null }>`
    select type, name, tbl_name, sql from sqlite_master where name not like 'sqlite_%' order by type, name`.execute(
    db.kysely,
  );
  const tables = objects.filter((o) => o.type === 'table').map((o) => o.name);
  const perTable: Record<string, unknown> = {};
  for (const table of tables) {
    const columns = (await sql`select * from pragma_table_xinfo(${table})`.execute(db.kysely)).rows;
    const keys = (await sql`select * from pragma_foreign_key_list(${table})`.execute(db.kysely)).rows;
    // Not `seq`: the position in which an index was created says nothing of the schema.
    const indexes = (
      await sql<{
        name: string;
      }>`select name, "unique", origin, partial from pragma_index_list(${table}) order by name`.execute(db.kysely)
    ).rows;
    const indexColumns: Record<string, unknown> = {};
    for (const index of indexes)
      indexColumns[index.name] = (await sql`select * from pragma_index_xinfo(${index.name})`.execute(db.kysely)).rows;
    perTable[table] = { columns, keys, indexes, indexColumns };
  }
  return { objects: objects.map((o) => ({ ...o, sql: squeeze(o.sql) })), perTable };
}

/** PostgreSQL: the current schema's columns, indexes, constraints, sequences and storage options. */
async function postgresSchema(db: Db) {
  const rows = async (query: ReturnType<typeof sql>) => (await query.execute(db.kysely)).rows;
  const { rows: current } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db.kysely);
  const schema = current[0].schema;
  // Index and constraint definitions name the schema; the two databases live in different ones.
  const unqualified = (value: unknown) => JSON.parse(JSON.stringify(value).replaceAll(`${schema}.`, ''));
  return unqualified({
    columns: await rows(sql`
      select table_name, column_name, ordinal_position, column_default, is_nullable, data_type, udt_name,
             character_maximum_length, numeric_precision, numeric_scale, is_identity, identity_generation,
             identity_start, identity_increment, is_generated, generation_expression, collation_name
      from information_schema.columns where table_schema = current_schema() order by table_name, ordinal_position`),
    indexes: await rows(sql`
      select tablename, indexname, indexdef from pg_indexes where schemaname = current_schema() order by tablename, indexname`),
    constraints: await rows(sql`
      select rel.relname as table_name, con.conname, con.contype, con.condeferrable, con.condeferred,
             pg_get_constraintdef(con.oid) as definition
      from pg_constraint con
      join pg_class rel on rel.oid = con.conrelid
      join pg_namespace ns on ns.oid = rel.relnamespace
      where ns.nspname = current_schema() order by rel.relname, con.conname`),
    relations: await rows(sql`
      select c.relname, c.relkind, c.relpersistence, c.reloptions, c.relhasindex, c.relreplident,
             am.amname as access_method
      from pg_class c
      join pg_namespace ns on ns.oid = c.relnamespace
      left join pg_am am on am.oid = c.relam
      where ns.nspname = current_schema() order by c.relname`),
    sequences: await rows(sql`
      select sequence_name, data_type, start_value, minimum_value, maximum_value, increment, cycle_option
      from information_schema.sequences where sequence_schema = current_schema() order by sequence_name`),
    triggers: await rows(sql`
      select event_object_table, trigger_name, action_timing, event_manipulation, action_statement
      from information_schema.triggers where trigger_schema = current_schema() order by event_object_table, trigger_name`),
  });
}

async function dump(db: Db) {
  const schema = db.dialect === 'postgres' ? await postgresSchema(db) : await sqliteSchema(db);
  const { rows: applied } = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(
    db.kysely,
  );
  // The seeded demo rows (migration 0001) are data the schema comes with.
  const products = await db.kysely.selectFrom('products').select(['name', 'sku', 'price']).orderBy('sku').execute();
  return { schema, applied: applied.map((row) => row.name), products };
}

describe('migrations from every earlier release', () => {
  let fresh: { database: TestDatabase; db: Db };
  let expected: Awaited<ReturnType<typeof dump>>;
  before(async () => {
    const database = await freshDatabase();
    fresh = { database, db: openDb(database.url) };
    await migrateToLatest(fresh.db);
    expected = await dump(fresh.db);
  });
  after(async () => {
    await fresh.db.close();
    await fresh.database.drop();
  });

  it('the dump sees what the schema is made of', () => {
    // A comparison of two empty dumps would prove nothing.
    const text = JSON.stringify(expected.schema);
    for (const part of [
      'webhook_deliveries',
      'webhook_deliveries_due_idx',
      'mail_suppressions_active_unique',
      'memberships',
      'status',
      'teams_copy_to_memberships',
    ]) {
      assert.ok(text.includes(part), `the dump names ${part}`);
    }
    if (fresh.db.dialect === 'postgres') assert.match(text, /fillfactor=40/, 'storage options are in the dump');
    assert.deepEqual(
      expected.applied,
      MIGRATIONS.map(([name]) => name),
    );
  });

  it('the dump tells apart a database with one stray difference', async () => {
    const database = await freshDatabase();
    const db = openDb(database.url);
    const postgres = db.dialect === 'postgres';
    // Each: a change a divergent migration path could leave behind, and its undoing.
    const strays: [string, string][] = [
      ['create index stray_idx on teams (name)', 'drop index stray_idx'],
      [
        'drop index webhook_deliveries_due_idx; create index webhook_deliveries_due_idx on webhook_deliveries (next_retry_at)',
        `drop index webhook_deliveries_due_idx; create index webhook_deliveries_due_idx on webhook_deliveries (next_retry_at) where status = 'pending'`,
      ],
      ...(postgres
        ? ([
            [
              'alter table webhook_deliveries reset (fillfactor)',
              'alter table webhook_deliveries set (fillfactor = 40)',
            ],
            [
              'alter table teams add constraint stray_check check (length(name) > 0)',
              'alter table teams drop constraint stray_check',
            ],
            [`alter table teams alter column name set default ''`, 'alter table teams alter column name drop default'],
          ] as [string, string][])
        : ([['alter table teams add column stray text', 'alter table teams drop column stray']] as [string, string][])),
    ];
    try {
      await migrateToLatest(db);
      assert.deepEqual(await dump(db), expected);
      for (const [change, undo] of strays) {
        for (const statement of change.split('; ')) await sql.raw(statement).execute(db.kysely);
        assert.notDeepEqual(await dump(db), expected, change);
        for (const statement of undo.split('; ')) await sql.raw(statement).execute(db.kysely);
        assert.deepEqual(await dump(db), expected, `undone: ${change}`);
      }
    } finally {
      await db.close();
      await database.drop();
    }
  });

  for (let applied = 1; applied < MIGRATIONS.length; applied++) {
    const release = MIGRATIONS[applied - 1][0];
    it(`a database at ${release}, migrated by this code, has the schema of a fresh one`, async () => {
      const database = await freshDatabase();
      const db = openDb(database.url);
      try {
        assert.deepEqual(
          await migrateToLatest(db, MIGRATIONS.slice(0, applied)),
          MIGRATIONS.slice(0, applied).map(([name]) => name),
        );
        assert.deepEqual(
          await migrateToLatest(db),
          MIGRATIONS.slice(applied).map(([name]) => name),
        );
        assert.deepEqual(await dump(db), expected);
      } finally {
        await db.close();
        await database.drop();
      }
    });
  }
});
