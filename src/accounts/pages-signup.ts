// Sign-up, e-mail confirmation, and resending the confirmation. Sign-up answers the same way whether
// or not the address already has an account (that account's owner gets a "you already have an
// account" e-mail instead), so the page never tells who is registered.
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app-context.ts';
import { nowIso } from '../util/time.ts';
import { formString } from '../web/forms.ts';
import { renderError, renderPage, seeOther, setNotice, verifyCsrf } from '../web/render.ts';
import { consumeKey, issueKey, peekKey } from './account-keys.ts';
import { sendAlreadyRegisteredMail, sendConfirmationMail } from './account-mail.ts';
import { checkThrottle, lockedMessage, lockedOut, recordFailure } from './auth-throttle.ts';
import { isValidEmail, normaliseEmail } from './email.ts';
import { hashPassword } from './passwords.ts';
import { passwordProblem } from './password-policy.ts';
import { redirectToLogin, safeNextPath } from './session-auth.ts';
import { createUser, findUserByEmail, MIN_PASSWORD_LENGTH } from './users.ts';

const CHECK_MAIL = (email: string) => [
  `We sent a message to ${email}. Open the link in it to confirm your address, then log in.`,
  'No message? Check your spam folder, or sign up again in a few minutes.',
];

export function registerSignupPages(pages: FastifyInstance, ctx: AppContext) {
  const db = ctx.db.kysely;

  pages.get('/accounts/signup/', async (request, reply) => {
    if (request.identity.user) return seeOther(reply, '/accounts/profile/');
    return renderPage(reply, 'accounts/views/signup', { title: 'Sign up', email: '', minLength: MIN_PASSWORD_LENGTH });
  });

  pages.post('/accounts/signup/', async (request, reply) => {
    verifyCsrf(request);
    const email = normaliseEmail(formString(request, 'email', { max: 300 }));
    const password = formString(request, 'password', { trim: false });
    const form = { title: 'Sign up', email, minLength: MIN_PASSWORD_LENGTH };
    if (!isValidEmail(email))
      return renderPage(
        reply,
        'accounts/views/signup',
        { ...form, error: 'Enter a valid e-mail address.' },
        { status: 400 },
      );
    const problem = passwordProblem(password, email);
    if (problem) return renderPage(reply, 'accounts/views/signup', { ...form, error: problem }, { status: 400 });
    // Each sign-up sends an e-mail: limited per (address, client) like the other mail-sending forms.
    const address = ctx.clientAddresses.of(request.raw);
    const throttle = await checkThrottle(ctx, 'verify', email, address);
    if (throttle.locked)
      return renderPage(
        reply,
        'accounts/views/signup',
        { ...form, error: lockedOut(reply, throttle) },
        { status: 429 },
      );
    await recordFailure(ctx, 'verify', email, address);

    const existing = await findUserByEmail(db, email);
    if (existing) {
      await hashPassword(password); // the same argon2 cost as creating an account
      await sendAlreadyRegisteredMail(ctx, db, email);
    } else {
      let userId: number | null = null;
      try {
        userId = await createUser(db, { email, password });
      } catch {
        // Lost a race with a concurrent sign-up for the same address: answer exactly as above.
      }
      if (userId !== null) {
        const id = userId;
        await db
          .transaction()
          .execute(async (trx) =>
            sendConfirmationMail(ctx, trx, email, await issueKey(trx, 'confirm_email', id, email)),
          );
      }
    }
    return renderPage(reply, 'accounts/views/message', {
      title: 'Check your e-mail',
      lines: CHECK_MAIL(email),
      link: null,
    });
  });

  pages.get('/accounts/confirm-email/:key/', async (request, reply) => {
    const { key } = request.params as { key: string };
    const record = await peekKey(db, 'confirm_email', key);
    if (!record)
      return renderError(
        reply,
        410,
        'This confirmation link is invalid, expired or already used. Log in and ask for a new one from your profile.',
        '/accounts/login/',
      );
    return renderPage(reply, 'accounts/views/confirm-email', {
      title: 'Confirm your e-mail address',
      email: record.email,
      key,
    });
  });

  pages.post('/accounts/confirm-email/:key/', async (request, reply) => {
    verifyCsrf(request);
    const { key } = request.params as { key: string };
    const confirmed = await db.transaction().execute(async (trx) => {
      const record = await consumeKey(trx, 'confirm_email', key);
      if (!record) return false;
      // Only while the account still has the address the link was sent to.
      const result = await trx
        .updateTable('users')
        .set({ email_verified_at: nowIso(), updated_at: nowIso() })
        .where('id', '=', record.userId)
        .where('email', '=', record.email)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    });
    if (!confirmed)
      return renderError(reply, 410, 'This confirmation link is invalid, expired or already used.', '/accounts/login/');
    setNotice(reply, 'Your e-mail address is confirmed.');
    return seeOther(reply, request.identity.user ? '/accounts/profile/' : '/accounts/login/');
  });

  pages.post('/accounts/confirm-email/resend/', async (request, reply) => {
    verifyCsrf(request);
    const user = request.identity.user;
    if (!user) return redirectToLogin(reply, '/accounts/profile/');
    const back = safeNextPath(formString(request, 'next'));
    const row = await findUserByEmail(db, user.email);
    if (row?.email_verified_at) {
      setNotice(reply, 'Your e-mail address is already confirmed.');
      return seeOther(reply, back);
    }
    const address = ctx.clientAddresses.of(request.raw);
    const throttle = await checkThrottle(ctx, 'verify', user.email, address);
    if (throttle.locked) {
      setNotice(reply, lockedMessage(throttle));
      return seeOther(reply, back);
    }
    await recordFailure(ctx, 'verify', user.email, address);
    await db
      .transaction()
      .execute(async (trx) =>
        sendConfirmationMail(ctx, trx, user.email, await issueKey(trx, 'confirm_email', user.id, user.email)),
      );
    setNotice(reply, `We sent a new confirmation link to ${user.email}.`);
    return seeOther(reply, back);
  });
}
