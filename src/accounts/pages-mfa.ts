// Two-factor authentication with TOTP: enrol (QR code and the secret as text), confirm with a code,
// see the recovery codes once. Starting enrolment, new recovery codes and turning TOTP off each need a
// recent re-authentication (SERVICE_REAUTH_MAX_AGE_SECONDS; login counts).
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app-context.ts';
import { formString } from '../web/forms.ts';
import { setOnce, takeOnce } from '../web/once.ts';
import { renderPage, seeOther, setNotice, verifyCsrf } from '../web/render.ts';
import { checkThrottle, lockedOut, recordFailure } from './auth-throttle.ts';
import { hasRecentReauth, redirectToLogin, redirectToReauth } from './session-auth.ts';
import {
  beginEnrolment,
  confirmEnrolment,
  deactivateTotp,
  pendingEnrolment,
  regenerateRecoveryCodes,
  totpStatus,
} from './totp.ts';

const CODES_PAGE = '/accounts/mfa/recovery-codes/';

export function registerMfaPages(pages: FastifyInstance, ctx: AppContext) {
  const reauthAge = () => ctx.config.accounts.reauthMaxAgeSeconds;

  const page = async (userId: number, email: string) => ({
    title: 'Two-factor authentication',
    status: await totpStatus(ctx, userId),
    enrolment: await pendingEnrolment(ctx, userId, email),
  });

  pages.get('/accounts/mfa/', async (request, reply) => {
    const user = request.identity.user;
    if (!user) return redirectToLogin(reply, '/accounts/mfa/');
    return renderPage(reply, 'accounts/views/mfa', await page(user.id, user.email));
  });

  pages.post('/accounts/mfa/totp/start/', async (request, reply) => {
    verifyCsrf(request);
    const user = request.identity.user;
    if (!user) return redirectToLogin(reply, '/accounts/mfa/');
    // Someone holding a stolen session must not be able to put their own second factor on the account.
    if (!hasRecentReauth(request, reauthAge())) return redirectToReauth(reply, '/accounts/mfa/');
    await beginEnrolment(ctx, user.id);
    return seeOther(reply, '/accounts/mfa/');
  });

  pages.post('/accounts/mfa/totp/', async (request, reply) => {
    verifyCsrf(request);
    const user = request.identity.user;
    if (!user) return redirectToLogin(reply, '/accounts/mfa/');
    const address = ctx.clientAddresses.of(request.raw);
    const throttle = await checkThrottle(ctx, 'totp', user.email, address);
    if (throttle.locked)
      return renderPage(
        reply,
        'accounts/views/mfa',
        { ...(await page(user.id, user.email)), error: lockedOut(reply, throttle) },
        { status: 429 },
      );
    const codes = await confirmEnrolment(ctx, user.id, formString(request, 'code', { max: 20 }));
    if (!codes) {
      await recordFailure(ctx, 'totp', user.email, address);
      return renderPage(
        reply,
        'accounts/views/mfa',
        {
          ...(await page(user.id, user.email)),
          error: 'That code is not valid. Check the time on your phone and enter the current code.',
        },
        { status: 400 },
      );
    }
    setOnce(reply, CODES_PAGE, codes);
    setNotice(reply, 'Two-factor authentication is on.');
    return seeOther(reply, CODES_PAGE);
  });

  pages.get(CODES_PAGE, async (request, reply) => {
    const user = request.identity.user;
    if (!user) return redirectToLogin(reply, '/accounts/mfa/');
    const codes = takeOnce<string[]>(request, reply, CODES_PAGE);
    return renderPage(reply, 'accounts/views/recovery-codes', { title: 'Recovery codes', codes });
  });

  pages.post(CODES_PAGE, async (request, reply) => {
    verifyCsrf(request);
    const user = request.identity.user;
    if (!user) return redirectToLogin(reply, '/accounts/mfa/');
    if (!hasRecentReauth(request, reauthAge())) return redirectToReauth(reply, '/accounts/mfa/');
    if (!(await totpStatus(ctx, user.id)).enrolled) return seeOther(reply, '/accounts/mfa/');
    setOnce(reply, CODES_PAGE, await regenerateRecoveryCodes(ctx, user.id));
    return seeOther(reply, CODES_PAGE);
  });

  pages.post('/accounts/mfa/totp/deactivate/', async (request, reply) => {
    verifyCsrf(request);
    const user = request.identity.user;
    if (!user) return redirectToLogin(reply, '/accounts/mfa/');
    if (!hasRecentReauth(request, reauthAge())) return redirectToReauth(reply, '/accounts/mfa/');
    await deactivateTotp(ctx, user.id);
    setNotice(reply, 'Two-factor authentication is off.');
    return seeOther(reply, '/accounts/mfa/');
  });
}
