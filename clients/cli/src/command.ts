// What a command is: its words, usage, options (Node's parseArgs option shapes, plus a description
// for --help), how many positional arguments it takes, and what it does.
import type { Io } from './io.ts';
import type { Session } from './session.ts';

export interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
  multiple?: boolean;
  /** Shown in --help; a string option's value name is the word in capitals in it, e.g. `--url URL`. */
  help: string;
}

export interface Args {
  values: Record<string, string | boolean | (string | boolean)[] | undefined>;
  positionals: string[];
}

export interface Context {
  io: Io;
  /** --json: print the API's JSON instead of a table. */
  json: boolean;
  profileName: string;
  /** The directory of hosts.json. */
  configDir: string;
  /** The stored or SVC_TOKEN credentials and a typed client (exit 4 when there are none). */
  session(): Session;
}

export interface Command {
  path: string[];
  /** After the words: e.g. `TEAM NAME [--slug SLUG]`. */
  usage: string;
  summary: string;
  /** More lines for --help. */
  details?: string[];
  options?: Record<string, OptionSpec>;
  /** Positional arguments: at least `min`, at most `max` (Infinity: any). */
  args: { min: number; max: number };
  run(ctx: Context, args: Args): Promise<void>;
}

export const str = (args: Args, name: string): string | undefined => {
  const value = args.values[name];
  return typeof value === 'string' ? value : undefined;
};

export const list = (args: Args, name: string): string[] => {
  const value = args.values[name];
  return Array.isArray(value) ? value.map(String) : typeof value === 'string' ? [value] : [];
};
