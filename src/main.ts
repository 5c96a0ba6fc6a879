#!/usr/bin/env node
// `svc`: the operator CLI and the process entry point (serve, migrate, …).
import { enableCompileCache } from 'node:module';
import {
  CommandError,
  UsageError,
  parseCommand,
  type CliIo,
  type Command,
} from './cli/framework.ts';
import { ConfigError, loadConfig, type Config } from './config.ts';
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
  options: {},
  async run(_values, { open }, io) {
    const stopped = stopSignal();
    const ctx = await open();
    const [{ WORKER_TASKS }, { startWorker }] = await Promise.all([import('./worker/tasks.ts'), import('./worker/worker.ts')]);
    const worker = startWorker(ctx, WORKER_TASKS);
    io.out(`svc worker running (${WORKER_TASKS.map((t) => t.name).join(', ') || 'no tasks'}), database ${ctx.db.dialect}`);
    await stopped;
    await worker.stop();
  },
};

const migrateCommand: Command = {
  path: ['migrate'],
  usage: 'svc migrate',
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

async function usage(): Promise<string> {
  return ['Usage:', ...(await allCommands()).map((c) => `  ${c.usage}`)].join('\n');
}

/** Runs one CLI invocation and returns its exit code (0 ok, 2 bad arguments, 1 other failure). */
export async function runCli(argv: string[], env: NodeJS.ProcessEnv, io: CliIo): Promise<number> {
  const command = (await candidates(argv))
    .filter((c) => c.path.every((word, i) => argv[i] === word))
    .sort((a, b) => b.path.length - a.path.length)[0];
  if (!command) {
    io.err(argv.length ? `unknown command: ${argv.join(' ')}\n${await usage()}` : await usage());
    return 2;
  }
  let ctx: AppContext | null = null;
  try {
    const values = parseCommand(command, argv.slice(command.path.length));
    let config: Config;
    try {
      config = loadConfig(env);
    } catch (error) {
      if (error instanceof ConfigError) {
        io.err(`configuration error: ${error.message}`);
        return 1;
      }
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
    if (error instanceof UsageError) {
      io.err(`${error.message}\nusage: ${command.usage}`);
      return 2;
    }
    if (error instanceof CommandError) {
      io.err(error.message);
      return 1;
    }
    io.err(`error: ${(error as Error).stack ?? error}`);
    return 1;
  } finally {
    await (ctx as AppContext | null)?.db.close();
  }
}

const invokedDirectly = process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href;
if (invokedDirectly || process.env.SVC_CLI_ENTRY === '1') {
  // Node keeps the compiled code of the modules loaded from here on (nearly all: each command's
  // modules load on demand) in its compile cache, and a later start reuses it instead of compiling
  // again: 30-35 ms of a 350 ms `svc serve` start on a slow machine, and no more memory at listen.
  // The cache is NODE_COMPILE_CACHE's directory if set, else <tmp>/node-compile-cache; Node checks
  // each entry against its source and Node version, and NODE_DISABLE_COMPILE_CACHE=1 turns it off.
  enableCompileCache();
  const io: CliIo = { out: (text) => process.stdout.write(text + '\n'), err: (text) => process.stderr.write(text + '\n') };
  runCli(process.argv.slice(2), process.env, io).then((code) => {
    process.exitCode = code;
  });
}
