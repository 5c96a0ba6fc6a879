// Seeds the benchmark database with the service's own functions (createUser, createPat), exactly
// as `svc user create` / `svc token create` would: migrations, argon2id password hashes, token
// hashes. Writes the raw tokens, one per line, to the file given as the first argument.
// Usage: DATABASE_URL=… SERVICE_DATA_DIR=… SECRET_KEY=… node bench/seed.ts <tokens-file> <users> <tokens-per-user>
import fs from 'node:fs';
import { createUser } from '../src/accounts/users.ts';
import { loadConfig } from '../src/config.ts';
import { createContext } from '../src/context.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { createPat } from '../src/tokens/pats.ts';

export const BENCH_PASSWORD = 'bench password that is long enough';

const [file, usersArg, perUserArg] = process.argv.slice(2);
const users = Number(usersArg ?? 64);
const perUser = Number(perUserArg ?? 16);
const ctx = createContext(loadConfig(process.env));
await migrateToLatest(ctx.db);
const tokens: string[] = [];
for (let u = 0; u < users; u++) {
  const n = String(u).padStart(4, '0');
  // Equal-length profiles: every /api/v1/me/ response has the same size as the baseline's body.
  const userId = await createUser(ctx.db.kysely, {
    email: `bench-user-${n}@example.com`,
    password: BENCH_PASSWORD,
    firstName: 'Bench',
    lastName: `User${n}`,
    displayName: `Bench User ${n}`,
    verified: true,
  });
  for (let t = 0; t < perUser; t++) {
    tokens.push(
      (await createPat(ctx.db.kysely, { userId, name: `bench ${t}`, scopes: ['read:profile'], expiresAt: null })).token,
    );
  }
}
fs.writeFileSync(file, tokens.join('\n') + '\n');
await ctx.db.close();
