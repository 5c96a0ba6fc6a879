// `svc backup --to FILE`: an online copy of the embedded SQLite database (docs/operations.md).
import fs from 'node:fs';
import path from 'node:path';
import { CommandError, UsageError, printTable, required, type Command } from '../cli/framework.ts';
import { BackupInterrupted, backupSqlite } from './sqlite-backup.ts';

const SIGNALS = ['SIGINT', 'SIGTERM'] as const;

/** The target must be a new file in an existing directory; checked before anything is opened. */
function checkTarget(target: string) {
  // lstat: a symbolic link, even a dangling one, is a name that exists.
  if (fs.lstatSync(target, { throwIfNoEntry: false }))
    throw new UsageError(`${target} already exists; svc backup never replaces a file`);
  const directory = path.dirname(target);
  if (!fs.statSync(directory, { throwIfNoEntry: false })?.isDirectory())
    throw new UsageError(`the directory ${directory} does not exist`);
}

/** The SQLite file DATABASE_URL names; PostgreSQL and in-memory databases have none to copy. */
function sourceFile(databaseUrl: string): string {
  if (!databaseUrl.startsWith('sqlite:')) {
    throw new UsageError(
      'DATABASE_URL is PostgreSQL: back it up with pg_dump (docs/operations.md); svc backup copies the embedded SQLite database',
    );
  }
  const location = databaseUrl.slice('sqlite:'.length);
  if (location === ':memory:')
    throw new UsageError(
      'DATABASE_URL is sqlite::memory:, which lives inside one process; there is no file to back up',
    );
  const file = path.resolve(location);
  if (!fs.existsSync(file)) throw new CommandError(`no database file at ${file}`);
  return file;
}

function humanSize(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${bytes} bytes` : `${value.toFixed(1)} ${units[unit]}`;
}

const backupCommand: Command = {
  path: ['backup'],
  usage: 'svc backup --to FILE',
  summary:
    'Copies the live SQLite database, while other processes keep writing, to the new file FILE (mode 0600) and prints its size and row counts (progress on a terminal); on PostgreSQL, use pg_dump.',
  options: { to: { type: 'string' } },
  async run(values, { config }, io) {
    const target = path.resolve(required(values, 'to'));
    const source = sourceFile(config.databaseUrl);
    checkTarget(target);

    // Progress goes to a terminal only, rewriting one line; piped or redirected, only the result.
    const terminal = process.stderr.isTTY ? process.stderr : null;
    let shown = false;
    const report = (copied: number, total: number) => {
      if (!terminal) return;
      terminal.write(`\rcopied ${copied} of ${total} pages (${total ? Math.floor((copied / total) * 100) : 100}%)`);
      shown = true;
    };
    // Ctrl-C or SIGTERM stops the copy and removes the temporary file; a second one kills at once.
    let interrupted = false;
    const interrupt = () => {
      interrupted = true;
    };
    for (const signal of SIGNALS) process.once(signal, interrupt);
    try {
      const result = await backupSqlite(source, target, {
        busyTimeoutMs: config.sqliteBusyTimeoutMs,
        onProgress: report,
        interrupted: () => interrupted,
      });
      report(result.pages, result.pages);
      if (shown) terminal?.write('\n');
      io.out(
        `backup written to ${result.file}: ${humanSize(result.bytes)} (${result.bytes} bytes, ${result.pages} pages)`,
      );
      printTable(io, result.rows, false);
    } catch (error) {
      if (shown) terminal?.write('\n');
      if (error instanceof BackupInterrupted) throw new CommandError(`interrupted; nothing was written to ${target}`);
      throw error;
    } finally {
      for (const signal of SIGNALS) process.off(signal, interrupt);
    }
  },
};

export const backupCommands: Command[] = [backupCommand];
