// Log in (with the TOTP step for enrolled users) and log out.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppContext } from '../app-context.ts';
import { formString } from '../web/forms.ts';
import { renderPage, seeOther, setNotice, verifyCsrf } from '../web/render.ts';
import { checkThrottle, clearFailures, lockedOut, recordFailure } from './auth-throttle.ts';
import { normaliseEmail } from './email.ts';
import { burnPasswordCheck, verifyPassword } from './passwords.ts';
import { safeNextPath } from './session-auth.ts';
import { hasTotp, useRecoveryCode, verifyTotpCode } from './totp.ts';
import { findUserByEmail } from './users.ts';

const BAD_CREDENTIALS = 'The e-mail address or password is incorrect.';

const nextOf = (request: FastifyRequest) => safeNextPath((request.query as Record<string, unknown>)?.next);

export function registerLoginPages(pages: FastifyInstance, ctx: AppContext) {
  const db = ctx.db.kysely;

  pages.get('/accounts/login/', async (request, reply) => {
    const next = nextOf(request);
    if (request.identity.user) return seeOther(reply, next);
    return renderPage(reply, 'accounts/views/login', { title: 'Log in', email: '', next });
  });

  pages.post('/accounts/login/', async (request, reply) => {
    verifyCsrf(request);
    const email = normaliseEmail(formString(request, 'email', { max: 254 }));
    const password = formString(request, 'password', { trim: false });
    const next = safeNextPath(formString(request, 'next'));
    const form = { title: 'Log in', email, next };
    const address = ctx.clientAddresses.of(request.raw);
    const throttle = await checkThrottle(ctx, 'login', email, address);
    if (throttle.locked) {
      return renderPage(reply, 'accounts/views/login', { ...form, error: lockedOut(reply, throttle) }, { status: 429 });
    }
    const user = email ? await findUserByEmail(db, email) : undefined;
    // An unknown address costs the same argon2 time as a wrong password: the answer and its timing match.
    const passwordOk = user ? await verifyPassword(password, user.password_hash) : await burnPasswordCheck(password);
    if (!user || !passwordOk || user.is_active !== 1) {
      await recordFailure(ctx, 'login', email, address);
      return renderPage(reply, 'accounts/views/login', { ...form, error: BAD_CREDENTIALS }, { status: 400 });
    }
    await clearFailures(ctx, 'login', email, address);
    if (await hasTotp(ctx, user.id)) {
      await ctx.sessions.start(request, reply, user.id, 'mfa');
      return seeOther(reply, `/accounts/login/totp/?next=${encodeURIComponent(next)}`);
    }
    await ctx.sessions.start(request, reply, user.id, 'full');
    return seeOther(reply, next);
  });

  pages.get('/accounts/login/totp/', async (request, reply) => {
    const next = nextOf(request);
    const session = request.identity.session;
    if (session?.stage === 'full') return seeOther(reply, next);
    if (!session) return seeOther(reply, `/accounts/login/?next=${encodeURIComponent(next)}`);
    return renderPage(reply, 'accounts/views/login-totp', { title: 'Two-factor authentication', next });
  });

  pages.post('/accounts/login/totp/', async (request, reply) => {
    verifyCsrf(request);
    const next = safeNextPath(formString(request, 'next'));
    const session = request.identity.session;
    if (!session || session.stage !== 'mfa')
      return seeOther(reply, `/accounts/login/?next=${encodeURIComponent(next)}`);
    const address = ctx.clientAddresses.of(request.raw);
    const account = session.account.email;
    const throttle = await checkThrottle(ctx, 'totp', account, address);
    if (throttle.locked) {
      return renderPage(
        reply,
        'accounts/views/login-totp',
        { title: 'Two-factor authentication', next, error: lockedOut(reply, throttle) },
        { status: 429 },
      );
    }
    const code = formString(request, 'code', { max: 40 });
    const ok =
      (await verifyTotpCode(ctx, session.account.id, code)) || (await useRecoveryCode(ctx, session.account.id, code));
    if (!ok) {
      await recordFailure(ctx, 'totp', account, address);
      return renderPage(
        reply,
        'accounts/views/login-totp',
        { title: 'Two-factor authentication', next, error: 'That code is not valid. Try the current code.' },
        { status: 400 },
      );
    }
    await clearFailures(ctx, 'totp', account, address);
    await ctx.sessions.start(request, reply, session.account.id, 'full');
    return seeOther(reply, next);
  });

  pages.post('/accounts/logout/', async (request, reply) => {
    verifyCsrf(request);
    await ctx.sessions.end(request, reply);
    setNotice(reply, 'You have been logged out.');
    return seeOther(reply, '/accounts/login/');
  });
}
