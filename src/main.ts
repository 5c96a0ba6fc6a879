#!/usr/bin/env node
// `svc`: the operator CLI and the process entry point (serve, migrate, …).
import { userCommands } from './accounts/cli.ts';
import {
  CommandError,
  UsageError,
  parseCommand,
  type CliIo,
  type Command,
} from './cli/framework.ts';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { createContext } from './context.ts';
import { migrateToLatest } from './db/migrate.ts';
import type { AppContext } from './app-context.ts';
import { oauthCommands } from './oauth/cli.ts';
import { serve } from './serve.ts';
import { teamCommands } from './teams/cli.ts';
import { suppressionCommands } from './mail/cli.ts';
import { tokenCommands } from './tokens/cli.ts';
import { webhookCommands } from './webhooks/cli.ts';
import { WORKER_TASKS } from './worker/tasks.ts';
import { startWorker } from './worker/worker.ts';

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
    const ctx = createContext(config);
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

export const commands: Command[] = [serveCommand, workerCommand, migrateCommand, ...userCommands, ...teamCommands, ...tokenCommands, ...oauthCommands, ...webhookCommands, ...suppressionCommands];

function usage(): string {
  return ['Usage:', ...commands.map((c) => `  ${c.usage}`)].join('\n');
}

/** Runs one CLI invocation and returns its exit code (0 ok, 2 bad arguments, 1 other failure). */
export async function runCli(argv: string[], env: NodeJS.ProcessEnv, io: CliIo): Promise<number> {
  const command = commands
    .filter((c) => c.path.every((word, i) => argv[i] === word))
    .sort((a, b) => b.path.length - a.path.length)[0];
  if (!command) {
    io.err(argv.length ? `unknown command: ${argv.join(' ')}\n${usage()}` : usage());
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
          ctx = createContext(config);
          await migrateToLatest(ctx.db);
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
  const io: CliIo = { out: (text) => process.stdout.write(text + '\n'), err: (text) => process.stderr.write(text + '\n') };
  runCli(process.argv.slice(2), process.env, io).then((code) => {
    process.exitCode = code;
  });
}
