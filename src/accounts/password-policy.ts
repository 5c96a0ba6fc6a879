// What a new password must be: at least MIN_PASSWORD_LENGTH characters, at most 1,000 (argon2 input
// bound), not the e-mail address, and not a common password. The common list ships with the code
// (no network at sign-up); a password also counts as common when it is a listed one with digits or
// symbols appended ("baseball2024!"), the commonest way people stretch a short password.
import fs from 'node:fs';
import { assetPath } from '../web/assets.ts';
import { MIN_PASSWORD_LENGTH } from './users.ts';

export const MAX_PASSWORD_LENGTH = 1000;

let common: Set<string> | null = null;

function commonPasswords(): Set<string> {
  common ??= new Set(
    fs
      .readFileSync(assetPath('accounts/common-passwords.txt'), 'utf8')
      .split('\n')
      .filter((line) => line && !line.startsWith('#')),
  );
  return common;
}

export function isCommonPassword(password: string): boolean {
  const lowered = password.toLowerCase();
  const list = commonPasswords();
  if (list.has(lowered)) return true;
  const stem = lowered.replace(/[\d\W_]+$/, '');
  return stem.length >= 8 && list.has(stem);
}

/** The reason a password is refused, or null when it is acceptable. */
export function passwordProblem(password: string, email = ''): string | null {
  if (password.length < MIN_PASSWORD_LENGTH)
    return `The password must be at least ${MIN_PASSWORD_LENGTH} characters long.`;
  if (password.length > MAX_PASSWORD_LENGTH)
    return `The password must be at most ${MAX_PASSWORD_LENGTH} characters long.`;
  const lowered = password.toLowerCase();
  if (email && (lowered === email.toLowerCase() || lowered === email.toLowerCase().split('@')[0]))
    return 'The password must not be your e-mail address.';
  if (isCommonPassword(password)) return 'This password is too common. Choose one that is harder to guess.';
  return null;
}
