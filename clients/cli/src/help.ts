// --help texts: the whole command list, a group's commands, or one command with its options.
import type { Command, OptionSpec } from './command.ts';
import { paint, type Io } from './io.ts';

export const GLOBAL_OPTIONS: Record<string, OptionSpec> = {
  profile: { type: 'string', help: 'the NAME of the credentials in hosts.json (default: SVC_PROFILE or "default")' },
  json: { type: 'boolean', help: "print the API's JSON (lists as arrays) instead of a table" },
  help: { type: 'boolean', short: 'h', help: 'show help' },
};

function optionLines(options: Record<string, OptionSpec>): string[] {
  const rows = Object.entries(options).map(([name, spec]) => {
    const placeholder = spec.type === 'string' ? ` ${/\b([A-Z][A-Z_]+)\b/.exec(spec.help)?.[1] ?? 'VALUE'}` : '';
    return [`${spec.short ? `-${spec.short}, ` : '    '}--${name}${placeholder}`, spec.help];
  });
  const width = Math.max(...rows.map(([flag]) => flag.length));
  return rows.map(([flag, help]) => `  ${flag.padEnd(width)}  ${help}`);
}

function commandLine(command: Command, width: number): string {
  return `  ${command.path.join(' ').padEnd(width)}  ${command.summary}`;
}

export function printOverview(io: Io, commands: Command[], version: string): void {
  const width = Math.max(...commands.map((c) => c.path.join(' ').length));
  io.out(`svc-cli ${version}: the command line of the svc API`);
  io.out('');
  io.out(paint(io, 'bold', 'Usage:') + ' svc-cli <command> [arguments] [--profile NAME] [--json]');
  io.out('');
  io.out(paint(io, 'bold', 'Commands:'));
  for (const command of commands) io.out(commandLine(command, width));
  io.out('');
  io.out(paint(io, 'bold', 'Options:'));
  for (const line of optionLines({ ...GLOBAL_OPTIONS, version: { type: 'boolean', help: 'print the version' } }))
    io.out(line);
  io.out('');
  io.out('Environment: SVC_TOKEN (a token; overrides hosts.json), SVC_URL (the server), SVC_PROFILE, NO_COLOR.');
  io.out('Exit codes: 0 ok, 1 failure, 2 usage, 4 authentication needed or refused.');
  io.out("`svc-cli <command> --help` shows a command's options.");
}

export function printGroup(io: Io, group: string, commands: Command[]): void {
  const width = Math.max(...commands.map((c) => c.path.join(' ').length));
  io.out(paint(io, 'bold', 'Usage:') + ` svc-cli ${group} <command> [arguments]`);
  io.out('');
  for (const command of commands) io.out(commandLine(command, width));
}

export function printCommand(io: Io, command: Command): void {
  io.out(paint(io, 'bold', 'Usage:') + ` svc-cli ${command.path.join(' ')}${command.usage ? ` ${command.usage}` : ''}`);
  io.out('');
  io.out(command.summary + '.');
  for (const line of command.details ?? []) io.out(line);
  io.out('');
  io.out(paint(io, 'bold', 'Options:'));
  for (const line of optionLines({ ...(command.options ?? {}), ...GLOBAL_OPTIONS })) io.out(line);
}
