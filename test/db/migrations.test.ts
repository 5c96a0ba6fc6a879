// Migrations: one set that runs on SQLite and PostgreSQL; applying them again is a no-op; on
// PostgreSQL several connections migrating a fresh schema at once all succeed (advisory lock), and a
// schema of the same database that already holds migration tables does not confuse them. Several
// `svc migrate` processes at once: migrate-processes.test.ts.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import pg from 'pg';
import { sql } from 'kysely';
import { openDb } from '../../src/db/connection.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { MIGRATIONS } from '../../src/db/migrations/index.ts';
import { freshDatabase } from '../support/database.ts';

const ALL = MIGRATIONS.map(([name]) => name);
const pgUrl = process.env.TEST_DATABASE_URL;

describe('migrations', () => {
  it('are listed in name order (the order Kysely applies them in)', () => {
    assert.deepEqual(ALL, [...ALL].sort());
    assert.ok(ALL.length >= 1);
  });

  it('apply every migration once on a fresh database; a second run applies nothing and keeps the data', async () => {
    const database = await freshDatabase();
    const db = openDb(database.url);
    try {
      assert.deepEqual(await migrateToLatest(db), ALL);
      await db.kysely
        .insertInto('teams')
        .values({
          id: '11111111-1111-1111-1111-111111111111',
          name: 'Kept',
          slug: 'kept',
          is_active: 1,
          created_at: 'x',
          updated_at: 'x',
        })
        .execute();
      assert.deepEqual(await migrateToLatest(db), []);
      assert.deepEqual(await migrateToLatest(db), []);
      const teams = await db.kysely.selectFrom('teams').select('slug').execute();
      assert.deepEqual(
        teams.map((r) => r.slug),
        ['kept'],
      );
      const products = await db.kysely
        .selectFrom('products')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      assert.equal(Number(products.n), 5, 'the demo rows are seeded once');
    } finally {
      await db.close();
      await database.drop();
    }
  });

  it('a restart applies a migration still pending on a database that has the others', async () => {
    const database = await freshDatabase();
    const db = openDb(database.url);
    const last = ALL.at(-1)!;
    try {
      assert.deepEqual(await migrateToLatest(db), ALL);
      // As a database left by the release before the last migration.
      await MIGRATIONS.at(-1)![1].down!(db.kysely);
      await sql`delete from kysely_migration where name = ${last}`.execute(db.kysely);
      assert.deepEqual(await migrateToLatest(db), [last]);
      assert.deepEqual(await migrateToLatest(db), []);
    } finally {
      await db.close();
      await database.drop();
    }
  });

  it('a database holding a migration this code does not know is refused, and nothing is applied', async () => {
    const database = await freshDatabase();
    const db = openDb(database.url);
    try {
      assert.deepEqual(await migrateToLatest(db), ALL);
      await sql`insert into kysely_migration (name, timestamp) values ('9999_from_a_newer_release', ${new Date().toISOString()})`.execute(
        db.kysely,
      );
      await assert.rejects(migrateToLatest(db), /9999_from_a_newer_release/);
      const { rows } = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(db.kysely);
      assert.deepEqual(
        rows.map((r) => r.name),
        [...ALL, '9999_from_a_newer_release'],
      );
    } finally {
      await db.close();
      await database.drop();
    }
  });

  it('a second connection (another process) finds the database migrated', async () => {
    const database = await freshDatabase();
    const first = openDb(database.url);
    const second = openDb(database.url);
    try {
      assert.deepEqual(await migrateToLatest(first), ALL);
      assert.deepEqual(await migrateToLatest(second), []);
    } finally {
      await first.close();
      await second.close();
      await database.drop();
    }
  });

  it(
    'on PostgreSQL, concurrent runs on a fresh schema all succeed and apply each migration once',
    { skip: !pgUrl && 'TEST_DATABASE_URL not set' },
    async () => {
      const database = await freshDatabase();
      const dbs = Array.from({ length: 4 }, () => openDb(database.url));
      try {
        const results = await Promise.all(dbs.map((db) => migrateToLatest(db)));
        assert.deepEqual(
          results.flat().sort(),
          [...ALL].sort(),
          `each migration applied by exactly one run: ${JSON.stringify(results)}`,
        );
        const { rows } = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(
          dbs[0].kysely,
        );
        assert.deepEqual(
          rows.map((r) => r.name),
          ALL,
        );
      } finally {
        await Promise.all(dbs.map((db) => db.close()));
        await database.drop();
      }
    },
  );

  it(
    'on PostgreSQL, migration tables in another schema of the same database do not stop a fresh schema from migrating',
    { skip: !pgUrl && 'TEST_DATABASE_URL not set' },
    async () => {
      const decoy = `decoy_${randomBytes(4).toString('hex')}`;
      const admin = new pg.Client({ connectionString: pgUrl });
      await admin.connect();
      await admin.query(
        `create schema ${decoy}; create table ${decoy}.kysely_migration (name varchar(255) primary key, timestamp varchar(255)); create table ${decoy}.kysely_migration_lock (id varchar(255) primary key, is_locked integer)`,
      );
      const database = await freshDatabase();
      const db = openDb(database.url);
      try {
        assert.deepEqual(await migrateToLatest(db), ALL);
        const { rows } = await admin.query(
          `select table_schema from information_schema.tables where table_name = 'kysely_migration' and table_schema = $1`,
          [new URL(database.url).searchParams.get('options')!.replace('-c search_path=', '')],
        );
        assert.equal(rows.length, 1, 'the migration table lives in the fresh schema');
      } finally {
        await db.close();
        await database.drop();
        await admin.query(`drop schema ${decoy} cascade`);
        await admin.end();
      }
    },
  );

  it(
    'on PostgreSQL, a migrated schema later on the search path does not make a fresh one look migrated',
    { skip: !pgUrl && 'TEST_DATABASE_URL not set' },
    async () => {
      const migratedElsewhere = await freshDatabase();
      const fresh = await freshDatabase();
      const schemaOf = (url: string) => new URL(url).searchParams.get('options')!.replace('-c search_path=', '');
      const url = new URL(fresh.url);
      url.searchParams.set('options', `-c search_path=${schemaOf(fresh.url)},${schemaOf(migratedElsewhere.url)}`);
      const other = openDb(migratedElsewhere.url);
      const db = openDb(url.toString());
      try {
        assert.deepEqual(await migrateToLatest(other), ALL);
        assert.deepEqual(await migrateToLatest(db), ALL);
        const { rows } = await sql<{
          n: number;
        }>`select count(*)::int as n from ${sql.table(`${schemaOf(fresh.url)}.teams`)}`.execute(db.kysely);
        assert.equal(rows[0].n, 0, 'the fresh schema has tables of its own');
      } finally {
        await db.close();
        await other.close();
        await fresh.drop();
        await migratedElsewhere.drop();
      }
    },
  );

  it(
    'on PostgreSQL, schemas created and dropped by others meanwhile do not disturb a migration',
    { skip: !pgUrl && 'TEST_DATABASE_URL not set' },
    async () => {
      const churners = await Promise.all(
        Array.from({ length: 3 }, async () => {
          const client = new pg.Client({ connectionString: pgUrl });
          await client.connect();
          return client;
        }),
      );
      let stop = false;
      const churning = Promise.all(
        churners.map(async (client) => {
          while (!stop) {
            const name = `churn_${randomBytes(4).toString('hex')}`;
            await client.query(`create schema ${name}; create table ${name}.t (id int)`);
            await client.query(`drop schema ${name} cascade`);
          }
        }),
      );
      try {
        for (let i = 0; i < 5; i++) {
          const database = await freshDatabase();
          const db = openDb(database.url);
          try {
            assert.deepEqual(await migrateToLatest(db), ALL);
            assert.deepEqual(await migrateToLatest(db), []);
          } finally {
            await db.close();
            await database.drop();
          }
        }
      } finally {
        stop = true;
        await churning;
        await Promise.all(churners.map((client) => client.end()));
      }
    },
  );
});
