// Where a command's output goes, and how it looks there: aligned tables and colour on a terminal,
// tab-separated lines elsewhere (for cut and awk), JSON with --json. Colour only when the stream is a
// terminal and NO_COLOR is unset or empty (https://no-color.org), through Node's own styleText.
import { styleText } from 'node:util';

export interface Io {
  out(text: string): void;
  err(text: string): void;
  /** stdout is a terminal. */
  tty: boolean;
  /** stderr is a terminal: progress and prompts may be styled. */
  errTty: boolean;
  env: Record<string, string | undefined>;
  readStdin(): Promise<string>;
}

type Style = Parameters<typeof styleText>[0];

export function processIo(): Io {
  return {
    out: (text) => process.stdout.write(text + '\n'),
    err: (text) => process.stderr.write(text + '\n'),
    tty: process.stdout.isTTY === true,
    errTty: process.stderr.isTTY === true,
    env: process.env,
    async readStdin() {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    },
  };
}

function colourAllowed(io: Io, tty: boolean): boolean {
  const noColor = io.env.NO_COLOR;
  return tty && (noColor === undefined || noColor === '');
}

/** `text` styled for stdout (or stderr with `toErr`), or as it is where colour is not allowed. */
export function paint(io: Io, style: Style, text: string, toErr = false): string {
  return colourAllowed(io, toErr ? io.errTty : io.tty) ? styleText(style, text, { validateStream: false }) : text;
}

export type Cell = string | number | boolean | null | undefined;

function cellText(value: Cell): string {
  return value === null || value === undefined ? '' : String(value);
}

/** A list: aligned columns under a header on a terminal, tab-separated rows without one elsewhere. */
export function printTable(io: Io, headers: string[], rows: Cell[][]): void {
  const text = rows.map((row) => row.map(cellText));
  if (!io.tty) {
    for (const row of text) io.out(row.join('\t'));
    return;
  }
  if (rows.length === 0) {
    io.out(paint(io, 'dim', '(none)'));
    return;
  }
  const widths = headers.map((h, i) => Math.max(h.length, ...text.map((row) => row[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]))).join('  ');
  io.out(paint(io, 'bold', line(headers)));
  for (const row of text) io.out(line(row));
}

/** One object: `field  value` lines (aligned on a terminal, tab-separated elsewhere). */
export function printRecord(io: Io, fields: [string, Cell][]): void {
  if (!io.tty) {
    for (const [key, value] of fields) io.out(`${key}\t${cellText(value)}`);
    return;
  }
  const width = Math.max(...fields.map(([key]) => key.length));
  for (const [key, value] of fields) io.out(`${paint(io, 'bold', key.padEnd(width))}  ${cellText(value)}`);
}

export function printJson(io: Io, value: unknown): void {
  io.out(JSON.stringify(value, null, 2));
}
