#!/usr/bin/env node
// `svc`: the operator CLI and the process entry point (serve, migrate, …).
import { enableCompileCache } from 'node:module';
import {
  CommandError,
  commandHelp,
  isHelpFlag,
  parseCommand,
  usageText,
  type CliIo,
  type Command,
} from './cli/framework.ts';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { cliFailureOf } from './http/error-answers.ts';
import { resolveSiblingChunksDirectly } from './util/bundle-chunks.ts';
import type { AppContext } from './app-context.ts';

// Each command group's module (and what it imports: the OAuth server, the webhook client, …) is
// loaded only when its command runs: `svc serve` starts without the CLI's dependencies, and a CLI
// command without the HTTP app's (docs/architecture.md, "Lazy loading").
const COMMAND_GROUPS: Record<string, () => Promise<Command[]>> = {
  user: async () => (await import('./accounts/cli.ts')).userCommands,
  team: async () => (await import('./teams/cli.ts')).teamCommands,
  token: async () => (await import('./tokens/cli.ts')).tokenCommands,
  jwt: async () => (await import('./tokens/cli.ts')).tokenCommands,
  oauth: async () => (await import('./oauth/cli.ts')).oauthCommands,
  webhooks: async () => (await import('./webhooks/cli.ts')).webhookCommands,
  suppression: async () => (await import('./mail/cli.ts')).suppressionCommands,
  backup: async () => (await import('./backup/cli.ts')).backupCommands,
};

async function createContext(config: Config): Promise<AppContext> {
  return (await import('./context.ts')).createContext(config);
}

async function openMigrated(config: Config): Promise<AppContext> {
  const ctx = await createContext(config);
  await (await import('./db/migrate.ts')).migrateToLatest(ctx.db);
  return ctx;
}

/**
 * Resolves on the first SIGTERM or SIGINT. Listened for before anything starts or prints: until a
 * listener exists the signal's default action kills the process outright, so a supervisor (or a
 * test) that sends SIGTERM as soon as it reads the "listening" line would race a late listener.
 */
function stopSignal(): Promise<void> {
  return new Promise((resolve) => {
    process.once('SIGTERM', () => resolve());
    process.once('SIGINT', () => resolve());
  });
}

const serveCommand: Command = {
  path: ['serve'],
  usage: 'svc serve [--no-worker]',
  summary: 'Runs the HTTP API and, unless --no-worker, the background worker, until SIGTERM or SIGINT.',
  options: { 'no-worker': { type: 'boolean' } },
  async run(values, { config }) {
    const stopped = stopSignal();
    const ctx = await createContext(config);
    const { serve } = await import('./serve.ts');
    const running = await serve(ctx, { worker: values['no-worker'] !== true });
    await stopped;
    await running.stop();
  },
};

const workerCommand: Command = {
  path: ['worker'],
  usage: 'svc worker',
  summary: 'Runs only the background worker (webhook deliveries, mail, housekeeping); any number may run.',
  options: {},
  async run(_values, { config, open }, io) {
    const stopped = stopSignal();
    const ctx = await open();
    const [{ WORKER_TASKS }, { startWorker }] = await Promise.all([
      import('./worker-tasks.ts'),
      import('./worker/worker.ts'),
    ]);
    // Its own metrics endpoint (SERVICE_WORKER_METRICS_PORT), up before the tasks record anything.
    const metricsServer =
      config.metrics.workerPort === null
        ? null
        : await (await import('./metrics/worker-server.ts')).serveWorkerMetrics(ctx);
    const worker = startWorker(ctx, WORKER_TASKS);
    io.out(
      `svc worker running (${WORKER_TASKS.map((t) => t.name).join(', ') || 'no tasks'}), database ${ctx.db.dialect}`,
    );
    if (metricsServer) io.out(`svc worker metrics on ${metricsServer.url}`);
    await stopped;
    await metricsServer?.close();
    await worker.stop();
  },
};

const migrateCommand: Command = {
  path: ['migrate'],
  usage: 'svc migrate',
  summary: 'Applies pending database migrations (every command also does so before it starts).',
  options: {},
  async run(_values, { open }, io) {
    await open();
    io.out('migrations are up to date');
  },
};

const BUILT_IN: Command[] = [serveCommand, workerCommand, migrateCommand];

/** Every command, in the order the usage lists them (loads every group). */
export async function allCommands(): Promise<Command[]> {
  const groups = [...new Set(Object.values(COMMAND_GROUPS))];
  const loaded = await Promise.all(groups.map((load) => load()));
  return [...BUILT_IN, ...new Set(loaded.flat())];
}

/** The commands a command line can select: the built-in ones and the group named by its first word. */
async function candidates(argv: string[]): Promise<Command[]> {
  const group = Object.hasOwn(COMMAND_GROUPS, argv[0] ?? '') ? COMMAND_GROUPS[argv[0]] : null;
  return group ? [...BUILT_IN, ...(await group())] : BUILT_IN;
}

/** The commands whose path begins with `words` (a group: `svc team --help`), or none. */
async function commandsUnder(words: string[]): Promise<Command[]> {
  if (words.length === 0) return allCommands();
  return (await candidates(words)).filter((c) => words.every((word, i) => c.path[i] === word));
}

/** The command a command line selects: the longest path its first words spell. */
async function selectCommand(argv: string[]): Promise<Command | undefined> {
  return (await candidates(argv))
    .filter((c) => c.path.every((word, i) => argv[i] === word))
    .sort((a, b) => b.path.length - a.path.length)[0];
}

/** The words of a command line that name a command (those before the first option). */
function commandWords(argv: string[]): string[] {
  const firstOption = argv.findIndex((word) => word.startsWith('-'));
  return firstOption === -1 ? argv : argv.slice(0, firstOption);
}

/** `svc help [command…]`, `svc --help`, `svc <group> --help`: usage on stdout, exit 0; an unknown command, exit 2. */
async function printHelp(words: string[], io: CliIo): Promise<number> {
  const command = await selectCommand(words);
  if (command && command.path.length === words.length) {
    io.out(commandHelp(command));
    return 0;
  }
  const group = await commandsUnder(words);
  if (group.length > 0) {
    io.out(usageText(group));
    return 0;
  }
  return unknownCommand(words, io);
}

/** One line and the usage (of the group named by the first word, if it is one): exit 2. */
async function unknownCommand(words: string[], io: CliIo): Promise<number> {
  const group = await commandsUnder(words.slice(0, 1));
  const problem =
    group.length && words.length === 1
      ? `"${words[0]}" needs one of the commands below`
      : `unknown command "${words.join(' ')}"`;
  io.err(`svc: ${problem}\n${usageText(group.length ? group : await allCommands())}`);
  return 2;
}

const DEBUG_VALUES = ['1', 'true', 'yes', 'on'];

/**
 * Runs one CLI invocation and returns its exit code: 0 ok, 2 unknown command or bad arguments, 1
 * any other failure. A failure is one line on stderr, `svc: <what went wrong>`, as the one mapping
 * of errors (http/error-answers.ts) words it; the stack trace of an unexpected one follows only with
 * --debug (anywhere on the line) or SERVICE_DEBUG=1.
 */
export async function runCli(argv: string[], env: NodeJS.ProcessEnv, io: CliIo): Promise<number> {
  const debug = argv.includes('--debug') || DEBUG_VALUES.includes((env.SERVICE_DEBUG ?? '').trim().toLowerCase());
  const args = argv.filter((word) => word !== '--debug');
  if (args.length === 0) {
    io.err(usageText(await allCommands()));
    return 2;
  }
  if (args[0] === 'help' || isHelpFlag(args[0]))
    return printHelp(
      args.slice(1).filter((word) => !isHelpFlag(word)),
      io,
    );
  const command = await selectCommand(args);
  if (!command) {
    const words = commandWords(args);
    return args.some(isHelpFlag) ? printHelp(words, io) : unknownCommand(words, io);
  }
  const rest = args.slice(command.path.length);
  if (rest.some(isHelpFlag)) {
    io.out(commandHelp(command));
    return 0;
  }
  let ctx: AppContext | null = null;
  try {
    const values = parseCommand(command, rest);
    let config: Config;
    try {
      config = loadConfig(env);
    } catch (error) {
      if (error instanceof ConfigError) throw new CommandError(`configuration error: ${error.message}`);
      throw error;
    }
    await command.run(
      values,
      {
        config,
        open: async () => {
          ctx = await openMigrated(config);
          return ctx;
        },
      },
      io,
    );
    return 0;
  } catch (error) {
    const failure = cliFailureOf(error);
    io.err(`svc: ${failure.line}${failure.showUsage ? `\nUsage: ${command.usage}` : ''}`);
    if (debug && !failure.expected && !(error instanceof CommandError))
      io.err(String((error as Error)?.stack ?? error));
    return failure.exitCode;
  } finally {
    await (ctx as AppContext | null)?.db.close();
  }
}

const invokedDirectly = process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href;
if (invokedDirectly || process.env.SVC_CLI_ENTRY === '1') {
  // Node keeps the compiled code of the modules loaded from here on (nearly all: each command's
  // modules load on demand) in its compile cache, and a later start reuses it instead of compiling
  // again: compiling is a sizeable share of a `svc serve` start, and the cache costs no memory.
  // The cache is NODE_COMPILE_CACHE's directory if set, else <tmp>/node-compile-cache; Node checks
  // each entry against its source and Node version, and NODE_DISABLE_COMPILE_CACHE=1 turns it off.
  enableCompileCache();
  // The bundle (dist/main.js) resolves its own chunks without Node's resolver (util/bundle-chunks.ts);
  // the TypeScript sources, run unbundled, resolve as usual.
  if (import.meta.url.endsWith('.js')) resolveSiblingChunksDirectly(import.meta.url);
  const io: CliIo = {
    out: (text) => process.stdout.write(text + '\n'),
    err: (text) => process.stderr.write(text + '\n'),
  };
  void runCli(process.argv.slice(2), process.env, io).then((code) => {
    process.exitCode = code;
  });
}
