// Every command of svc-cli, in the order --help lists them.
import type { Command } from '../command.ts';
import { apiCommand } from './api.ts';
import { authCommands } from './auth.ts';
import { invitationCommands } from './invitations.ts';
import { teamCommands } from './teams.ts';
import { webhookCommands } from './webhooks.ts';

export const COMMANDS: Command[] = [
  ...authCommands,
  ...teamCommands,
  ...invitationCommands,
  ...webhookCommands,
  apiCommand,
];
