// `svc suppression list|release`: the operators' view of the suppression list.
import os from 'node:os';
import { UsageError, optional, printTable, required, type Command } from '../cli/framework.ts';
import { NotFoundError } from '../util/domain-errors.ts';
import { parseOneAddress } from './addresses.ts';
import { listActiveSuppressions, releaseSuppression, suppressionView } from './suppressions.ts';

function addressOption(value: string): string {
  const email = parseOneAddress(value);
  if (!email) throw new UsageError(`--email "${value}" is not an e-mail address`);
  return email;
}

const suppressionList: Command = {
  path: ['suppression', 'list'],
  usage: 'svc suppression list [--email E] [--json]',
  summary: 'Lists the actively suppressed addresses, newest first.',
  options: { email: { type: 'string' }, json: { type: 'boolean' } },
  async run(values, { open }, io) {
    const filter = optional(values, 'email');
    const email = filter === undefined ? undefined : addressOption(filter);
    const ctx = await open();
    const rows = await listActiveSuppressions(ctx.db.kysely, { email });
    // The row's id first, as in every other list the CLI prints.
    printTable(
      io,
      rows.map((row) => ({ id: row.id, ...suppressionView(row) })),
      values.json === true,
    );
  },
};

const suppressionRelease: Command = {
  path: ['suppression', 'release'],
  usage: 'svc suppression release --email E --reason "…" [--by WHO]',
  summary: 'Releases a suppressed address, recording who (--by, else the OS user), when and why.',
  options: { email: { type: 'string' }, reason: { type: 'string' }, by: { type: 'string' } },
  async run(values, { open }, io) {
    const email = addressOption(required(values, 'email'));
    const reason = required(values, 'reason').trim();
    if (reason.length > 1000) throw new UsageError('--reason must be at most 1000 characters');
    // Who released it: --by, else the operating-system account running the command.
    const by = optional(values, 'by')?.trim() || `os:${os.userInfo().username}`;
    const ctx = await open();
    if (!(await releaseSuppression(ctx.db.kysely, email, by, reason)))
      throw new NotFoundError(`${email} is not suppressed`);
    io.out(`${email} released`);
  },
};

export const suppressionCommands: Command[] = [suppressionList, suppressionRelease];
