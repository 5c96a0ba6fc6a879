// Password reset: ask for a link (the answer never tells whether the address has an account), then
// choose a new password on the key page. A reset ends every session of the account, confirms the
// address (the link proved it is theirs) and tells the owner by e-mail.
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app-context.ts';
import { nowIso } from '../util/time.ts';
import { formString } from '../web/forms.ts';
import { renderError, renderPage, seeOther, setNotice, verifyCsrf } from '../web/render.ts';
import { consumeKey, issueKey, peekKey } from './account-keys.ts';
import { sendPasswordChangedMail, sendPasswordResetMail } from './account-mail.ts';
import { checkThrottle, lockedOut, recordFailure } from './auth-throttle.ts';
import { isValidEmail, normaliseEmail } from './email.ts';
import { hashPassword } from './passwords.ts';
import { passwordProblem } from './password-policy.ts';
import { findUserByEmail, MIN_PASSWORD_LENGTH } from './users.ts';

const INVALID_KEY = 'This password reset link is invalid, expired or already used. Ask for a new one.';

export function registerPasswordPages(pages: FastifyInstance, ctx: AppContext) {
  const db = ctx.db.kysely;

  pages.get('/accounts/password/reset/', async (_request, reply) =>
    renderPage(reply, 'accounts/views/reset-request', { title: 'Reset your password', email: '' }),
  );

  pages.post('/accounts/password/reset/', async (request, reply) => {
    verifyCsrf(request);
    const email = normaliseEmail(formString(request, 'email', { max: 300 }));
    if (!isValidEmail(email)) {
      return renderPage(
        reply,
        'accounts/views/reset-request',
        { title: 'Reset your password', email, error: 'Enter a valid e-mail address.' },
        { status: 400 },
      );
    }
    const address = ctx.clientAddresses.of(request.raw);
    const throttle = await checkThrottle(ctx, 'reset', email, address);
    if (throttle.locked) {
      return renderPage(
        reply,
        'accounts/views/reset-request',
        { title: 'Reset your password', email, error: lockedOut(reply, throttle) },
        { status: 429 },
      );
    }
    // Every request counts (known address or not), so the limit itself reveals nothing.
    await recordFailure(ctx, 'reset', email, address);
    const user = await findUserByEmail(db, email);
    if (user && user.is_active === 1) {
      await db
        .transaction()
        .execute(async (trx) =>
          sendPasswordResetMail(ctx, trx, user.email, await issueKey(trx, 'password_reset', user.id, user.email)),
        );
    }
    return seeOther(reply, '/accounts/password/reset/done/');
  });

  pages.get('/accounts/password/reset/done/', async (_request, reply) =>
    renderPage(reply, 'accounts/views/message', {
      title: 'Check your e-mail',
      lines: [
        'If an account uses that address, we sent it a link to choose a new password. The link expires in 1 hour.',
      ],
      link: { href: '/accounts/login/', label: 'Back to log in' },
    }),
  );

  pages.get('/accounts/password/reset/key/:key/', async (request, reply) => {
    const { key } = request.params as { key: string };
    const record = await peekKey(db, 'password_reset', key);
    if (!record) return renderError(reply, 410, INVALID_KEY, '/accounts/password/reset/');
    return renderPage(reply, 'accounts/views/reset-key', {
      title: 'Choose a new password',
      email: record.email,
      key,
      minLength: MIN_PASSWORD_LENGTH,
    });
  });

  pages.post('/accounts/password/reset/key/:key/', async (request, reply) => {
    verifyCsrf(request);
    const { key } = request.params as { key: string };
    const record = await peekKey(db, 'password_reset', key);
    if (!record) return renderError(reply, 410, INVALID_KEY, '/accounts/password/reset/');
    const password = formString(request, 'password', { trim: false });
    const problem = passwordProblem(password, record.email);
    if (problem) {
      return renderPage(
        reply,
        'accounts/views/reset-key',
        { title: 'Choose a new password', email: record.email, key, minLength: MIN_PASSWORD_LENGTH, error: problem },
        { status: 400 },
      );
    }
    const hash = await hashPassword(password);
    const changed = await db.transaction().execute(async (trx) => {
      const used = await consumeKey(trx, 'password_reset', key);
      if (!used) return false;
      const now = nowIso();
      await trx
        .updateTable('users')
        .set({ password_hash: hash, updated_at: now })
        .where('id', '=', used.userId)
        .execute();
      await trx
        .updateTable('users')
        .set({ email_verified_at: now })
        .where('id', '=', used.userId)
        .where('email', '=', used.email)
        .where('email_verified_at', 'is', null)
        .execute();
      await trx.deleteFrom('sessions').where('user_id', '=', used.userId).execute();
      await sendPasswordChangedMail(ctx, trx, used.email);
      return true;
    });
    if (!changed) return renderError(reply, 410, INVALID_KEY, '/accounts/password/reset/');
    reply.clearCookie('svc_session', { path: '/' });
    setNotice(reply, 'Your password has been changed. Log in with the new one.');
    return seeOther(reply, '/accounts/login/');
  });
}
