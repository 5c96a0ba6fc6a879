import { findUserByEmail } from '../accounts/users.ts';
import { UsageError, optional, printTable, required, type Command } from '../cli/framework.ts';
import { ScopeRegistry, parseScopeString } from '../http/scopes.ts';
import { NotFoundError } from '../util/domain-errors.ts';
import { rotateJwtKey } from './jwt-keys.ts';
import { createPat, listPats, revokePat } from './pats.ts';

/**
 * `--expires-at`: a date (the token is valid through that whole UTC day) or an ISO 8601 time
 * with an offset or Z. A moment that is not in the future is a usage error.
 */
export function parseExpiry(value: string, now = Date.now()): string {
  let moment: number;
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) {
    moment = Date.parse(`${value}T00:00:00Z`) + 86_400_000;
    if (new Date(moment - 86_400_000).toISOString().slice(0, 10) !== value) moment = NaN;
  } else if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(value)) {
    moment = Date.parse(value);
  } else {
    moment = NaN;
  }
  if (Number.isNaN(moment))
    throw new UsageError(
      `--expires-at "${value}" is not a date (2027-01-31) or an ISO 8601 time with Z or an offset (2027-01-31T12:00:00Z)`,
    );
  if (moment <= now) throw new UsageError(`--expires-at "${value}" is in the past`);
  return new Date(moment).toISOString();
}

const tokenCreate: Command = {
  path: ['token', 'create'],
  usage: 'svc token create --email E --name N [--scopes "read:profile read:teams"] [--expires-at 2027-01-31]',
  summary:
    'Creates a personal access token and prints it alone on one line, once (a date means valid through that UTC day).',
  options: {
    email: { type: 'string' },
    name: { type: 'string' },
    scopes: { type: 'string' },
    'expires-at': { type: 'string' },
  },
  async run(values, { config, open }, io) {
    const email = required(values, 'email');
    const name = required(values, 'name').trim();
    if (name.length > 100) throw new UsageError('--name must be at most 100 characters');
    const scopes = parseScopeString(optional(values, 'scopes') ?? '');
    const unknown = new ScopeRegistry(config.extraScopes).unknown(scopes);
    if (unknown.length) throw new UsageError(`unknown scope(s): ${unknown.join(', ')}`);
    const expiresAt = values['expires-at'] === undefined ? null : parseExpiry(required(values, 'expires-at'));
    const ctx = await open();
    const user = await findUserByEmail(ctx.db.kysely, email);
    if (!user) throw new NotFoundError(`no user with e-mail ${email}`);
    const { token } = await createPat(ctx.db.kysely, { userId: user.id, name, scopes, expiresAt });
    io.out(token);
  },
};

const tokenList: Command = {
  path: ['token', 'list'],
  usage: 'svc token list --email E [--json]',
  summary: "Lists a user's tokens, newest first (never the token itself).",
  options: { email: { type: 'string' }, json: { type: 'boolean' } },
  async run(values, { open }, io) {
    const email = required(values, 'email');
    const ctx = await open();
    const user = await findUserByEmail(ctx.db.kysely, email);
    if (!user) throw new NotFoundError(`no user with e-mail ${email}`);
    const rows = await listPats(ctx.db.kysely, user.id);
    printTable(io, rows as unknown as Record<string, unknown>[], values.json === true);
  },
};

const tokenRevoke: Command = {
  path: ['token', 'revoke'],
  usage: 'svc token revoke --id ID',
  summary: 'Revokes a token: it stops working on the next request.',
  options: { id: { type: 'string' } },
  async run(values, { open }, io) {
    const id = required(values, 'id');
    if (!/^\d{1,15}$/.test(id)) throw new UsageError('--id must be a token id (an integer, see "svc token list")');
    const ctx = await open();
    if (!(await revokePat(ctx.db.kysely, Number(id)))) throw new NotFoundError(`no active token with id ${id}`);
    io.out(`token ${id} revoked`);
  },
};

const jwtRotateKey: Command = {
  path: ['jwt', 'rotate-key'],
  usage: 'svc jwt rotate-key',
  summary: 'Makes a new JWT signing key and prints its kid; the old key verifies until its tokens expire.',
  options: {},
  async run(_values, { open }, io) {
    const ctx = await open();
    io.out(await rotateJwtKey(ctx));
  },
};

export const tokenCommands: Command[] = [tokenCreate, tokenList, tokenRevoke, jwtRotateKey];
