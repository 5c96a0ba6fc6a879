// An online copy of the live SQLite database (`svc backup`), taken with SQLite's backup API through
// node:sqlite's backup() while `svc serve`, `svc worker` and other commands keep writing.
//
// - One snapshot. SQLite's backup copies a batch of pages per step and starts over whenever another
//   connection commits between two steps; with a server and a worker committing every few
//   milliseconds a copy of any size would start over again and again. So the copy runs inside one
//   read transaction of its own connection, opened before the first step: every step reads the
//   same snapshot, nothing starts over, and the file holds exactly the transactions committed when
//   the copy began, those still in the WAL included (a reader sees the WAL). In WAL mode (which
//   every svc connection sets) a reader blocks no writer; the WAL only cannot start over until the
//   copy ends, so it grows by what is written meanwhile.
// - Never a partial file at the target. The copy is written to a temporary file beside the target,
//   checked, and only then given the target's name, with link(): unlike rename() it refuses when
//   the name was taken meanwhile (another backup to the same file), so nothing is ever replaced.
// - Mode 0600: the file holds password hashes and encrypted secrets. The temporary file is created
//   with that mode before SQLite opens it; SQLite gives its journal the database file's mode.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { DatabaseSync, backup } from 'node:sqlite';
import type { Database } from '../db/schema.ts';

/** The tables whose row counts a backup reports: the service's main records, in this order. */
export const COUNTED_TABLES: readonly (keyof Database)[] = [
  'users',
  'teams',
  'memberships',
  'invitations',
  'personal_access_tokens',
  'sessions',
  'oauth_models',
  'webhook_subscriptions',
  'events',
  'webhook_deliveries',
  'mail_outbox',
  'mail_suppressions',
  'audit_entries',
];

/** About a hundred progress reports whatever the size, and never steps of fewer than 100 pages. */
const STEPS = 100;
const MIN_PAGES_PER_STEP = 100;

export class BackupInterrupted extends Error {}

export interface BackupOptions {
  /** SERVICE_SQLITE_BUSY_TIMEOUT_MS: how long opening the snapshot waits for a lock (a recovery). */
  busyTimeoutMs: number;
  /** Called after each step but the last: pages copied so far, of the total. */
  onProgress?: (copied: number, total: number) => void;
  /** Checked between steps and before the copy gets its name: true ends the backup, nothing written. */
  interrupted?: () => boolean;
}

export interface BackupResult {
  file: string;
  bytes: number;
  pages: number;
  /** Row counts of COUNTED_TABLES in the copy (a table missing from it is left out). */
  rows: { table: string; rows: number }[];
}

/** Copies the SQLite database at `source` to the new file `target`; throws if `target` exists. */
export async function backupSqlite(source: string, target: string, options: BackupOptions): Promise<BackupResult> {
  const partial = `${target}.partial-${randomBytes(4).toString('hex')}`;
  // 'wx': created here, never an existing file.
  fs.closeSync(fs.openSync(partial, 'wx', 0o600));
  try {
    const pages = await copySnapshot(source, partial, options);
    const rows = checkAndCount(partial);
    if (options.interrupted?.()) throw new BackupInterrupted('interrupted');
    const bytes = fs.statSync(partial).size;
    publish(partial, target);
    return { file: target, bytes, pages, rows };
  } finally {
    for (const leftover of [partial, `${partial}-journal`, `${partial}-wal`, `${partial}-shm`])
      fs.rmSync(leftover, { force: true });
  }
}

async function copySnapshot(source: string, partial: string, options: BackupOptions): Promise<number> {
  // Read-write like every svc connection (a read-only one cannot open a WAL database whose -shm it
  // cannot write); it never writes. The busy timeout covers taking the snapshot, the one moment a
  // reader can be refused (another connection recovering the WAL or switching the file's mode).
  const database = new DatabaseSync(source, { timeout: options.busyTimeoutMs });
  try {
    database.exec('BEGIN');
    const total = (database.prepare('PRAGMA page_count').get() as { page_count: number }).page_count;
    // PRAGMA page_count reads page 1, which opens the read transaction: the snapshot starts here.
    const rate = Math.max(MIN_PAGES_PER_STEP, Math.ceil(total / STEPS));
    return await backup(database, partial, {
      rate,
      progress: ({ totalPages, remainingPages }) => {
        // Throwing here makes backup() stop and reject.
        if (options.interrupted?.()) throw new BackupInterrupted('interrupted');
        options.onProgress?.(totalPages - remainingPages, totalPages);
      },
    });
  } finally {
    if (database.isTransaction) database.exec('COMMIT');
    database.close();
  }
}

/** The copy passes SQLite's quick_check, and the row counts of COUNTED_TABLES in it. */
function checkAndCount(file: string): BackupResult['rows'] {
  const copy = new DatabaseSync(file);
  try {
    const check = copy.prepare('PRAGMA quick_check').all() as { quick_check: string }[];
    if (check.length !== 1 || check[0].quick_check !== 'ok') {
      throw new Error(`the copy failed SQLite's quick_check: ${check.map((row) => row.quick_check).join('; ')}`);
    }
    const present = new Set(
      (copy.prepare("SELECT name FROM sqlite_schema WHERE type = 'table'").all() as { name: string }[]).map(
        (row) => row.name,
      ),
    );
    return COUNTED_TABLES.filter((table) => present.has(table)).map((table) => ({
      table,
      rows: (copy.prepare(`SELECT count(*) AS n FROM "${table}"`).get() as { n: number }).n,
    }));
  } finally {
    // The last connection to close checkpoints and removes the copy's -wal and -shm files.
    copy.close();
  }
}

/** Gives the finished copy its name, never replacing a file, and makes the new name durable. */
function publish(partial: string, target: string) {
  try {
    fs.linkSync(partial, target);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST')
      throw new Error(`${target} was created by something else during the backup; nothing was written`);
    // A file system without hard links: rename, which replaces silently, after one more look.
    if (fs.existsSync(target))
      throw new Error(`${target} was created by something else during the backup; nothing was written`);
    fs.renameSync(partial, target);
  }
  syncDirectory(path.dirname(target));
}

function syncDirectory(directory: string) {
  let fd: number | null = null;
  try {
    fd = fs.openSync(directory, 'r');
    fs.fsyncSync(fd);
  } catch {
    // Some platforms cannot open or sync a directory; the file's own data is synced by SQLite.
  } finally {
    if (fd !== null) fs.closeSync(fd);
  }
}
