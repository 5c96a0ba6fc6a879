// Password hashing with argon2id from node:crypto (Node >= 24.7), stored in the PHC string format
// `$argon2id$v=19$m=…,t=…,p=…$<salt>$<hash>` so parameters can be raised later without a migration.
// The hashing runs off the event loop, on low-priority threads (argon2-threads.ts).
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { argon2id } from './argon2-threads.ts';

// OWASP's argon2id baseline: 19 MiB, 2 passes, 1 lane.
const PARAMS = { memory: 19456, passes: 2, parallelism: 1, tagLength: 32 };

const b64 = (buffer: Buffer) => buffer.toString('base64').replace(/=+$/, '');

export async function hashPassword(password: string): Promise<string> {
  const nonce = randomBytes(16);
  const hash = await argon2id({ message: password, nonce, ...PARAMS });
  return `$argon2id$v=19$m=${PARAMS.memory},t=${PARAMS.passes},p=${PARAMS.parallelism}$${b64(nonce)}$${b64(hash)}`;
}

const PHC = /^\$argon2id\$v=19\$m=(\d+),t=(\d+),p=(\d+)\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/;

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const match = PHC.exec(stored);
  if (!match) return false;
  const expected = Buffer.from(match[5], 'base64');
  const actual = await argon2id({
    message: password,
    nonce: Buffer.from(match[4], 'base64'),
    memory: Number(match[1]),
    passes: Number(match[2]),
    parallelism: Number(match[3]),
    tagLength: expected.length,
  });
  return timingSafeEqual(actual, expected);
}

// A fixed hash to verify against when the account does not exist, so that a wrong e-mail costs
// the same time as a wrong password.
let dummyHash: Promise<string> | null = null;
export async function burnPasswordCheck(password: string): Promise<false> {
  dummyHash ??= hashPassword('not-a-real-password');
  await verifyPassword(password, await dummyHash);
  return false;
}
