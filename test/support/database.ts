// A fresh database for one test file: a SQLite file in a temp dir, or, when TEST_DATABASE_URL is
// set, a new PostgreSQL schema of its own (dropped again by drop()).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';

export interface TestDatabase {
  url: string;
  dataDir: string;
  drop(): Promise<void>;
}

export async function freshDatabase(): Promise<TestDatabase> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-test-'));
  const base = process.env.TEST_DATABASE_URL;
  if (!base) {
    return {
      url: `sqlite:${path.join(dataDir, 'test.sqlite3')}`,
      dataDir,
      drop: async () => fs.rmSync(dataDir, { recursive: true, force: true }),
    };
  }
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const url = new URL(base);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    url: url.toString(),
    dataDir,
    drop: async () => {
      const client = new pg.Client({ connectionString: base });
      await client.connect();
      await client.query(`drop schema if exists ${schema} cascade`);
      await client.end();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
