// The browser side of the device flow at /o/device/, rendered for oidc-provider's deviceFlow hooks:
// the code entry form, the confirmation (client name and each scope in words, approve or deny), the
// result pages. The library owns the forms' anti-forgery field and the state changes; these
// functions only draw. Wrong codes are counted here (user-code-throttle.ts); mount.ts refuses a
// user or address over the limit before the library sees the code.
import type { KoaContextWithOIDC } from 'oidc-provider';
import type { AppContext } from '../app-context.ts';
import { pageHtml } from './html.ts';
import { appUserOf } from './constants.ts';
import { recordUserCodeFailure } from './user-code-throttle.ts';

function send(koa: KoaContextWithOIDC, html: string) {
  koa.type = 'html';
  koa.set('Cache-Control', 'no-store');
  koa.set('X-Frame-Options', 'DENY');
  koa.set('Referrer-Policy', 'same-origin');
  // As web/render.ts's pages; the library's code field carries an inline onfocus handler.
  koa.set(
    'Content-Security-Policy',
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self' 'unsafe-inline'; frame-ancestors 'none'; form-action 'self'",
  );
  koa.body = html;
}

export function devicePages(ctx: AppContext) {
  const { scopes: registry } = ctx;
  return {
    deviceInfo: (koa: KoaContextWithOIDC) => ({ ip: koa.ip, ua: koa.get('user-agent') }),

    async userCodeInputSource(
      koa: KoaContextWithOIDC,
      form: string,
      _out: unknown,
      err?: Error & { userCode?: string },
    ) {
      let message = 'Enter the code shown on your device.';
      let error: string | null = null;
      if (err?.name === 'AbortedError') {
        send(
          koa,
          pageHtml(koa.req, 'oauth/views/message', {
            title: 'Access denied',
            lines: ['The device was not connected. You can close this page.'],
          }),
        );
        return;
      }
      if (err && (err.userCode !== undefined || err.name === 'NoCodeError')) {
        error =
          err.name === 'ExpiredError'
            ? 'That code has expired. Start again on your device.'
            : err.name === 'AlreadyUsedError'
              ? 'That code has already been used.'
              : 'That code is not valid. Check it and try again.';
        const userId = appUserOf(koa.req);
        if (err.name === 'NotFoundError' && typeof userId === 'number')
          await recordUserCodeFailure(ctx.db.kysely, userId, koa.ip);
      } else if (err) {
        error = 'The request could not be completed. Start again on your device.';
      }
      message = error ? 'Enter the code shown on your device again.' : message;
      const input = form.replace(
        'placeholder="Enter code"',
        'placeholder="XXXX-XXXX" aria-label="Code" id="user_code"',
      );
      send(
        koa,
        pageHtml(koa.req, 'oauth/views/device-enter', { title: 'Connect a device', message, form: input, error }),
      );
    },

    async userCodeConfirmSource(
      koa: KoaContextWithOIDC,
      form: string,
      client: { clientId: string; clientName?: string },
      _info: unknown,
      userCode: string,
    ) {
      const code = koa.oidc.entities.DeviceCode as unknown as { params?: { scope?: string } } | undefined;
      const scopes = String(code?.params?.scope ?? '')
        .split(' ')
        .filter(Boolean);
      send(
        koa,
        pageHtml(koa.req, 'oauth/views/device-confirm', {
          title: 'Approve device',
          clientName: client.clientName || client.clientId,
          userCode,
          scopes: scopes.map((name) => ({ name, description: registry.describe(name) })),
          form,
        }),
      );
    },

    async successSource(koa: KoaContextWithOIDC) {
      const name = koa.oidc.client?.clientName || koa.oidc.client?.clientId || 'The device';
      send(
        koa,
        pageHtml(koa.req, 'oauth/views/message', {
          title: 'Device connected',
          lines: [`${name} is connected to your account. You can close this page and return to your device.`],
        }),
      );
    },

    errorHtml(koa: KoaContextWithOIDC, message: string): string {
      return pageHtml(koa.req, 'oauth/views/message', { title: 'Something went wrong', lines: [message] });
    },
  };
}
