// The e-mails of the accounts capability. They all go through the one mailer (mail/outbox.ts,
// queued in the caller's transaction); the plain-text part carries each link whole on its own line.
import type { AppContext } from '../app-context.ts';
import type { Executor } from '../db/schema.ts';
import { queueMail } from '../mail/outbox.ts';

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function html(paragraphs: string[], link: { href: string; label: string } | null): string {
  const body = paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`).join('');
  const button = link
    ? `<p><a href="${escapeHtml(link.href)}">${escapeHtml(link.label)}</a></p><p>${escapeHtml(link.href)}</p>`
    : '';
  return `<!doctype html><html><body style="font-family:sans-serif">${body}${button}</body></html>`;
}

export async function sendConfirmationMail(ctx: AppContext, trx: Executor, email: string, key: string) {
  const link = `${ctx.config.baseUrl}/accounts/confirm-email/${key}/`;
  const lines = ['Please confirm your e-mail address for your svc account by opening this link:'];
  await queueMail(ctx, trx, {
    to: email,
    subject: 'Confirm your e-mail address',
    text: `${lines[0]}\n\n${link}\n\nThe link works once and expires in 3 days. If you did not sign up, ignore this message.\n`,
    html: html([...lines], { href: link, label: 'Confirm e-mail address' }),
  });
}

/** Sent instead of a confirmation when someone signs up with an address that already has an account. */
export async function sendAlreadyRegisteredMail(ctx: AppContext, trx: Executor, email: string) {
  const login = `${ctx.config.baseUrl}/accounts/login/`;
  const reset = `${ctx.config.baseUrl}/accounts/password/reset/`;
  const text =
    `Someone tried to sign up for svc with this e-mail address, which already has an account.\n\n` +
    `If it was you, log in:\n\n${login}\n\nForgot your password? Reset it:\n\n${reset}\n\nIf it was not you, ignore this message.\n`;
  await queueMail(ctx, trx, {
    to: email,
    subject: 'You already have an svc account',
    text,
    html: html(
      [
        'Someone tried to sign up for svc with this e-mail address, which already has an account.',
        `Forgot your password? ${reset}`,
      ],
      { href: login, label: 'Log in' },
    ),
  });
}

export async function sendPasswordResetMail(ctx: AppContext, trx: Executor, email: string, key: string) {
  const link = `${ctx.config.baseUrl}/accounts/password/reset/key/${key}/`;
  await queueMail(ctx, trx, {
    to: email,
    subject: 'Reset your svc password',
    text: `To choose a new password for your svc account, open this link:\n\n${link}\n\nThe link works once and expires in 1 hour. If you did not ask for it, ignore this message: your password stays as it is.\n`,
    html: html(
      ['To choose a new password for your svc account, open this link. It works once and expires in 1 hour.'],
      { href: link, label: 'Choose a new password' },
    ),
  });
}

export async function sendPasswordChangedMail(ctx: AppContext, trx: Executor, email: string) {
  const reset = `${ctx.config.baseUrl}/accounts/password/reset/`;
  await queueMail(ctx, trx, {
    to: email,
    subject: 'Your svc password was changed',
    text: `The password of your svc account was just changed and every session was logged out.\n\nIf this was not you, reset your password now:\n\n${reset}\n`,
    html: html(
      [
        'The password of your svc account was just changed and every session was logged out.',
        'If this was not you, reset your password now.',
      ],
      { href: reset, label: 'Reset password' },
    ),
  });
}
