// A small command framework over node:util parseArgs: exit 0 on success (and for --help), 2 on an
// unknown command or bad arguments (one line and the usage on stderr, nothing written), 1 on any
// other failure (one line, `svc: <what went wrong>`, on stderr). List commands print a table or,
// with --json, a JSON array. Commands throw the service's DomainErrors (util/domain-errors.ts) and
// let them pass: http/error-answers.ts words the line and picks the exit code for every command.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { AppContext } from '../app-context.ts';
import type { Config } from '../config.ts';
import { ValidationError } from '../util/domain-errors.ts';

/** A bad argument, found before any I/O: a ValidationError, so exit 2 with the usage. */
export class UsageError extends ValidationError {}
/**
 * A failure of the command itself that no service reports as a DomainError (an interrupted backup,
 * an invalid configuration): exit 1, and no stack trace even with --debug.
 */
export class CommandError extends Error {}

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
}

export interface CliDeps {
  config: Config;
  /** Opens the database (with migrations applied); called only after the arguments are valid. */
  open(): Promise<AppContext>;
}

export type Options = NonNullable<ParseArgsConfig['options']>;
export type Values = Record<string, string | boolean | string[] | undefined>;

export interface Command {
  /** Words that select the command, e.g. ['token', 'create']. */
  path: string[];
  usage: string;
  /** What the command does, one sentence (printed by --help). */
  summary: string;
  options: Options;
  /** Validates arguments before any I/O; throws UsageError. */
  run(values: Values, deps: CliDeps, io: CliIo): Promise<void>;
}

export function required(values: Values, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value.trim() === '') throw new UsageError(`--${name} is required`);
  return value;
}

export function optional(values: Values, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}

export function printTable(io: CliIo, rows: Record<string, unknown>[], json: boolean) {
  if (json) {
    io.out(JSON.stringify(rows, null, 2));
    return;
  }
  if (rows.length === 0) {
    io.out('(none)');
    return;
  }
  const columns = Object.keys(rows[0]);
  const cell = (value: unknown) =>
    value === null || value === undefined ? '-' : Array.isArray(value) ? value.join(' ') : String(value);
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  io.out(line(columns.map((c) => c.toUpperCase())));
  for (const row of rows) io.out(line(columns.map((c) => cell(row[c]))));
}

export function parseCommand(command: Command, args: string[]): Values {
  try {
    return parseArgs({ args, options: command.options, strict: true, allowPositionals: false }).values as Values;
  } catch (error) {
    // parseArgs' first sentence ("Unknown option '--admin'"), in the CLI's one-line style.
    const message = (error as Error).message.split('. ')[0];
    throw new UsageError(message.charAt(0).toLowerCase() + message.slice(1));
  }
}

/** True for the words that ask for help instead of running anything. */
export const isHelpFlag = (word: string) => word === '--help' || word === '-h';

const GLOBAL_OPTIONS = [
  'Every command takes --help (its usage) and --debug (a stack trace with a failure; also SERVICE_DEBUG=1).',
  'Exit codes: 0 success, 1 failure (one line on stderr: "svc: <what went wrong>"), 2 unknown command or bad arguments.',
];

/** The usage of the given commands, with what each does. */
export function usageText(commands: readonly Command[]): string {
  const lines = ['Usage: svc <command> [options]', '', 'Commands:'];
  for (const command of commands) lines.push(`  ${command.usage}`, `      ${command.summary}`);
  return [...lines, '', ...GLOBAL_OPTIONS].join('\n');
}

/** One command's --help. */
export function commandHelp(command: Command): string {
  return [`Usage: ${command.usage}`, '', command.summary, '', ...GLOBAL_OPTIONS].join('\n');
}
