// The profile page (names, sessions: log out all others) and re-authentication (password, or a TOTP code when enrolled), which
// sensitive actions ask for when the last proof is older than SERVICE_REAUTH_MAX_AGE_SECONDS.
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app-context.ts';
import { formString } from '../web/forms.ts';
import { renderPage, seeOther, setNotice, verifyCsrf } from '../web/render.ts';
import { checkThrottle, clearFailures, lockedOut, recordFailure } from './auth-throttle.ts';
import { verifyPassword } from './passwords.ts';
import {
  PROFILE_FIELDS,
  PROFILE_NAME_MAX_LENGTH,
  profileProblem,
  updateProfileNames,
  type ProfileField,
} from './profile.ts';
import { redirectToLogin, safeNextPath } from './session-auth.ts';
import { hasTotp, verifyTotpCode } from './totp.ts';
import { findUserById } from './users.ts';

export function registerProfilePages(pages: FastifyInstance, ctx: AppContext) {
  const db = ctx.db.kysely;

  pages.get('/accounts/profile/', async (request, reply) => {
    const user = request.identity.user;
    if (!user) return redirectToLogin(reply, '/accounts/profile/');
    const session = request.identity.session;
    return renderPage(reply, 'accounts/views/profile', {
      title: 'Your profile',
      emailVerified: session?.emailVerified ?? false,
      values: { first_name: user.first_name, last_name: user.last_name, display_name: user.display_name },
      maxLength: PROFILE_NAME_MAX_LENGTH,
      sessionCount: await ctx.sessions.countForUser(user.id),
    });
  });

  pages.post('/accounts/sessions/end-others/', async (request, reply) => {
    verifyCsrf(request);
    const session = request.identity.session;
    if (!session || session.stage !== 'full') return redirectToLogin(reply, '/accounts/profile/');
    await ctx.sessions.endForUser(session.account.id, session.id);
    setNotice(reply, 'Every other session has been logged out.');
    return seeOther(reply, '/accounts/profile/');
  });

  pages.post('/accounts/profile/', async (request, reply) => {
    verifyCsrf(request);
    const user = request.identity.user;
    if (!user) return redirectToLogin(reply, '/accounts/profile/');
    const values = Object.fromEntries(
      PROFILE_FIELDS.map((field) => [field, formString(request, field, { max: 2000 })]),
    ) as Record<ProfileField, string>;
    const problem = profileProblem(values);
    if (problem) {
      const session = request.identity.session;
      return renderPage(
        reply,
        'accounts/views/profile',
        {
          title: 'Your profile',
          emailVerified: session?.emailVerified ?? false,
          values,
          maxLength: PROFILE_NAME_MAX_LENGTH,
          sessionCount: await ctx.sessions.countForUser(user.id),
          error: problem,
        },
        { status: 400 },
      );
    }
    const changed = await updateProfileNames(ctx, user.id, values);
    setNotice(reply, changed.length ? 'Your profile has been saved.' : 'Nothing to change.');
    return seeOther(reply, '/accounts/profile/');
  });

  const reauthForm = async (userId: number, next: string, error?: string) => ({
    title: 'Confirm it is you',
    next,
    totp: await hasTotp(ctx, userId),
    error: error ?? null,
  });

  pages.get('/accounts/reauthenticate/', async (request, reply) => {
    const next = safeNextPath((request.query as Record<string, unknown>)?.next);
    const user = request.identity.user;
    if (!user) return redirectToLogin(reply, `/accounts/reauthenticate/?next=${encodeURIComponent(next)}`);
    return renderPage(reply, 'accounts/views/reauthenticate', await reauthForm(user.id, next));
  });

  pages.post('/accounts/reauthenticate/', async (request, reply) => {
    verifyCsrf(request);
    const next = safeNextPath(formString(request, 'next'));
    const user = request.identity.user;
    const session = request.identity.session;
    if (!user || !session) return redirectToLogin(reply, `/accounts/reauthenticate/?next=${encodeURIComponent(next)}`);
    const address = ctx.clientAddresses.of(request.raw);
    const throttle = await checkThrottle(ctx, 'reauth', user.email, address);
    if (throttle.locked)
      return renderPage(
        reply,
        'accounts/views/reauthenticate',
        await reauthForm(user.id, next, lockedOut(reply, throttle)),
        { status: 429 },
      );
    const password = formString(request, 'password', { trim: false });
    const code = formString(request, 'code', { max: 20 });
    let ok = false;
    if (code) ok = await verifyTotpCode(ctx, user.id, code);
    else if (password) {
      const row = await findUserById(db, user.id);
      ok = !!row && (await verifyPassword(password, row.password_hash));
    }
    if (!ok) {
      await recordFailure(ctx, 'reauth', user.email, address);
      const error = code ? 'That code is not valid.' : 'The password is incorrect.';
      return renderPage(reply, 'accounts/views/reauthenticate', await reauthForm(user.id, next, error), {
        status: 400,
      });
    }
    await clearFailures(ctx, 'reauth', user.email, address);
    await ctx.sessions.markReauthenticated(session.id);
    setNotice(reply, 'Confirmed. You can continue.');
    return seeOther(reply, next);
  });
}
