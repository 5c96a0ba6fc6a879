import { UsageError, optional, required, type Command } from '../cli/framework.ts';
import { NotFoundError } from '../util/domain-errors.ts';
import { isValidEmail, normaliseEmail } from './email.ts';
import { MIN_PASSWORD_LENGTH, createUser, setUserActive } from './users.ts';

function validEmail(value: string): string {
  if (!isValidEmail(normaliseEmail(value))) throw new UsageError(`--email "${value}" is not a valid e-mail address`);
  return value;
}

const userCreate: Command = {
  path: ['user', 'create'],
  usage:
    'svc user create --email E --password P [--first-name F] [--last-name L] [--display-name D] [--verified] [--staff]',
  summary: "Creates a user and prints the new user's id.",
  options: {
    email: { type: 'string' },
    password: { type: 'string' },
    'first-name': { type: 'string' },
    'last-name': { type: 'string' },
    'display-name': { type: 'string' },
    verified: { type: 'boolean' },
    staff: { type: 'boolean' },
  },
  async run(values, { open }, io) {
    const email = validEmail(required(values, 'email'));
    const password = required(values, 'password');
    // A bad argument (exit 2), checked before the database is opened.
    if (password.length < MIN_PASSWORD_LENGTH)
      throw new UsageError(`--password must be at least ${MIN_PASSWORD_LENGTH} characters long`);
    const ctx = await open();
    const id = await createUser(ctx.db.kysely, {
      email,
      password,
      firstName: optional(values, 'first-name'),
      lastName: optional(values, 'last-name'),
      displayName: optional(values, 'display-name'),
      verified: values.verified === true,
      staff: values.staff === true,
    });
    io.out(String(id));
  },
};

function activation(active: boolean): Command {
  return {
    path: ['user', active ? 'activate' : 'deactivate'],
    usage: `svc user ${active ? 'activate' : 'deactivate'} --email E`,
    summary: active
      ? 'Lets a deactivated user sign in and use their credentials again.'
      : "Deactivates a user: the user's credentials stop working on the next request.",
    options: { email: { type: 'string' } },
    async run(values, { open }, io) {
      const email = validEmail(required(values, 'email'));
      const ctx = await open();
      if (!(await setUserActive(ctx.db.kysely, email, active)))
        throw new NotFoundError(`no user with e-mail ${normaliseEmail(email)}`);
      io.out(`${normaliseEmail(email)} ${active ? 'activated' : 'deactivated'}`);
    },
  };
}

export const userCommands: Command[] = [userCreate, activation(false), activation(true)];
