// svc-cli's entry: finds the command from the leading words, parses its options with Node's parseArgs
// (strict: an unknown option is a usage error), runs it, and turns any failure into one
// `svc-cli: <title>: <detail>` line (plus a line per field error) on stderr and an exit code.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Command, Context } from './command.ts';
import { COMMANDS } from './commands/index.ts';
import { EXIT, UsageError, describeFailure } from './failures.ts';
import { GLOBAL_OPTIONS, printCommand, printGroup, printOverview } from './help.ts';
import { configDir } from './hosts.ts';
import { processIo, type Io } from './io.ts';
import { openSession, type Session } from './session.ts';
import { VERSION } from './version.ts';

type Options = NonNullable<ParseArgsConfig['options']>;

function parseOptions(specs: Command['options']): Options {
  const options: Options = {};
  for (const [name, spec] of Object.entries({ ...specs, ...GLOBAL_OPTIONS })) {
    options[name] = {
      type: spec.type,
      ...(spec.short ? { short: spec.short } : {}),
      ...(spec.multiple ? { multiple: true } : {}),
    };
  }
  return options;
}

/**
 * The command named by the leading words, e.g. ["teams", "list"]; global options may come before
 * them (`svc-cli --profile work teams list`). Returns the arguments without those words.
 */
function findCommand(argv: string[]): { command: Command | null; group: Command[]; words: string[]; rest: string[] } {
  const words: string[] = [];
  const at: number[] = [];
  for (let i = 0; i < argv.length && words.length < 2; i++) {
    const arg = argv[i];
    if (arg === '--profile') i++;
    else if (arg.startsWith('-')) {
      if (words.length > 0) break;
    } else {
      words.push(arg);
      at.push(i);
    }
  }
  const exact = (n: number) => COMMANDS.find((c) => c.path.length === n && c.path.every((w, i) => w === words[i]));
  const command = exact(2) ?? exact(1) ?? null;
  const group = words.length > 0 ? COMMANDS.filter((c) => c.path.length === 2 && c.path[0] === words[0]) : [];
  const used = new Set(at.slice(0, command?.path.length ?? 0));
  return { command, group, words, rest: argv.filter((_, i) => !used.has(i)) };
}

export async function run(argv: string[], io: Io): Promise<number> {
  try {
    const { command, group, words, rest } = findCommand(argv);
    if (!command) {
      if (words.length === 0) {
        if (argv.includes('--version')) io.out(`svc-cli ${VERSION}`);
        else if (argv.every((arg) => arg === '--help' || arg === '-h')) printOverview(io, COMMANDS, VERSION);
        else throw new UsageError('a command is needed: `svc-cli --help` lists them');
        return EXIT.ok;
      }
      if (group.length > 0 && words.length === 1) {
        printGroup(io, words[0], group);
        return EXIT.ok;
      }
      throw new UsageError(
        `unknown command "${words.join(' ')}": \`svc-cli ${group.length > 0 ? `${words[0]} ` : ''}--help\` lists them`,
      );
    }
    let parsed;
    try {
      parsed = parseArgs({ args: rest, options: parseOptions(command.options), allowPositionals: true, strict: true });
    } catch (error) {
      throw new UsageError(
        `${(error as Error).message.replace(/\. To specify a positional argument.*$/s, '')} (see \`svc-cli ${command.path.join(' ')} --help\`)`,
      );
    }
    const { values, positionals } = parsed;
    if (values.help) {
      printCommand(io, command);
      return EXIT.ok;
    }
    const { min, max } = command.args;
    if (positionals.length < min || positionals.length > max) {
      const usage = `svc-cli ${command.path.join(' ')}${command.usage ? ` ${command.usage}` : ''}`;
      throw new UsageError(
        `${positionals.length < min ? 'missing arguments' : `unexpected argument "${positionals[max]}"`}: usage: ${usage}`,
      );
    }
    const profileName = (typeof values.profile === 'string' ? values.profile : io.env.SVC_PROFILE) || 'default';
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(profileName))
      throw new UsageError(`--profile must be 1 to 64 letters, digits, ".", "_" or "-"`);
    const dir = configDir(io.env);
    let session: Session | null = null;
    const ctx: Context = {
      io,
      json: values.json === true,
      profileName,
      configDir: dir,
      session: () => (session ??= openSession(io, dir, profileName)),
    };
    await command.run(ctx, { values, positionals });
    return EXIT.ok;
  } catch (error) {
    const { code, lines } = describeFailure(error);
    for (const line of lines) io.err(line);
    return code;
  }
}

export async function main(): Promise<void> {
  process.exitCode = await run(process.argv.slice(2), processIo());
}
