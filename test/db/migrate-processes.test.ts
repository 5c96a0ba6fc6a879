// Several `svc migrate` processes on a fresh SQLite file at once all succeed, each migration applied
// once. A file of its own because it starts processes: `npm run test:fast` leaves it out (PostgreSQL's
// concurrent migrations, on connections of one process, are in migrations.test.ts).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { openDb } from '../../src/db/connection.ts';
import { MIGRATIONS } from '../../src/db/migrations/index.ts';
import { svc } from '../cli/cli-helpers.ts';

const ALL = MIGRATIONS.map(([name]) => name);
const pgUrl = process.env.TEST_DATABASE_URL;

describe('migrations in several processes', () => {
  it(
    'on SQLite, `svc migrate` processes started together on a fresh data directory all succeed, each migration applied once',
    { skip: !!pgUrl && 'SQLite only' },
    async () => {
      // Kysely's SQLite migrator takes no lock across processes; here the migrations run in one
      // BEGIN IMMEDIATE transaction (db/sqlite-dialect.ts), so the others wait and then find them applied.
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-migrate-together-'));
      try {
        const env = { NODE_ENV: 'test', SERVICE_DATA_DIR: dir, LOG_LEVEL: 'silent' };
        const results = await Promise.all(Array.from({ length: 6 }, () => svc(env, ['migrate'])));
        assert.deepEqual(
          results,
          Array.from({ length: 6 }, () => ({ code: 0, stdout: 'migrations are up to date\n', stderr: '' })),
        );
        const db = openDb(`sqlite:${path.join(dir, 'service.sqlite3')}`);
        try {
          const { rows } = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(
            db.kysely,
          );
          assert.deepEqual(
            rows.map((r) => r.name),
            ALL,
          );
        } finally {
          await db.close();
        }
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
