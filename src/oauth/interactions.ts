// The interaction pages oidc-provider sends the browser to (interactions.url): /o/interaction/<uid>/.
//  - login prompt: the person logs in with the accounts pages (password, then TOTP when enrolled);
//    back here, the app session's user becomes the provider session's account.
//  - consent prompt: a page naming the client and each requested scope in words; approve grants
//    the scopes (consents.ts), deny ends the authorization with access_denied. A device-flow
//    consent needs no second page: the person approved on the device confirmation page, which
//    showed the same client and scopes.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { InteractionResults } from 'oidc-provider';
import type { AppContext, TypedApp } from '../app-context.ts';
import { redirectToLogin } from '../accounts/session-auth.ts';
import { formString } from '../web/forms.ts';
import { renderError, renderPage, seeOther, usePageErrors, verifyCsrf } from '../web/render.ts';
import { interactionPath } from './constants.ts';
import { grantScopes, rememberConsent } from './consents.ts';
import type { OAuthServer } from './provider.ts';
import type { LazyOAuthServer } from './lazy-server.ts';

type Details = Awaited<ReturnType<OAuthServer['provider']['interactionDetails']>>;
type Client = NonNullable<Awaited<ReturnType<OAuthServer['provider']['Client']['find']>>>;

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * What the consent page says about the client, so that a person can tell an impostor: its name
 * (which the client chose itself, so never alone), the host its client_id is published on (a
 * Client ID Metadata Document: the one fact about it that someone controls), the host the browser
 * goes back to, and a warning when that is this computer (an app running locally, or anything
 * listening on a loopback port).
 */
function consentFacts(client: Client, redirectUri: string) {
  const clientIdUrl = /^https:\/\//.test(client.clientId) ? URL.parse(client.clientId) : null;
  const redirectHost = URL.parse(redirectUri)?.hostname ?? '';
  return {
    clientName: client.clientName || client.clientId,
    clientUri: typeof client.clientUri === 'string' ? client.clientUri : null,
    clientIdHost: clientIdUrl?.host ?? null,
    redirectUri,
    redirectHost: URL.parse(redirectUri)?.host ?? redirectUri,
    redirectIsLocal: LOOPBACK.has(redirectHost) || redirectHost.endsWith('.localhost'),
  };
}

const EXPIRED = 'This sign-in request has expired or is not valid. Start again from the application.';

export function registerInteractionPages(app: TypedApp, ctx: AppContext, server: LazyOAuthServer) {
  const db = ctx.db.kysely;
  // The provider is built on first use (routes.ts); every handler here starts with load().
  let provider: OAuthServer['provider'];

  async function load(request: FastifyRequest, reply: FastifyReply): Promise<Details | null> {
    provider = (await server.get()).provider;
    try {
      const details = await provider.interactionDetails(request.raw, reply.raw);
      const { uid } = request.params as { uid: string };
      return details.uid === uid ? details : null;
    } catch {
      return null;
    }
  }

  async function finish(request: FastifyRequest, reply: FastifyReply, result: InteractionResults) {
    const returnTo = await provider.interactionResult(request.raw, reply.raw, result, {
      mergeWithLastSubmission: false,
    });
    return seeOther(reply, returnTo);
  }

  /**
   * The login step's way back. The browser arrives here at the end of the login form's redirect
   * chain, and the authorization may go straight on to the client (consent already given): the
   * login page's CSP (form-action 'self') would stop that chain at the client's origin. A Refresh
   * navigation starts a new chain, which that policy does not govern.
   */
  async function finishLogin(request: FastifyRequest, reply: FastifyReply, userId: number) {
    const returnTo = await provider.interactionResult(
      request.raw,
      reply.raw,
      { login: { accountId: String(userId) } },
      { mergeWithLastSubmission: false },
    );
    reply.header('Refresh', `0;url=${returnTo}`);
    return renderPage(reply, 'oauth/views/continue', { title: 'Signed in', href: returnTo });
  }

  /** Missing scopes per prompt details, as the library reports them (OIDC level and per resource). */
  function missingScopes(details: Details) {
    const info = details.prompt.details as {
      missingOIDCScope?: string[];
      missingResourceScopes?: Record<string, string[]>;
    };
    const resources = info.missingResourceScopes ?? {};
    const all = new Set([...(info.missingOIDCScope ?? []), ...Object.values(resources).flat()]);
    return { oidc: info.missingOIDCScope ?? [], resources, all: [...all] };
  }

  async function approve(details: Details, userId: number) {
    const clientId = String(details.params.client_id);
    const grant = details.grantId ? await provider.Grant.find(details.grantId) : undefined;
    const target = grant ?? new provider.Grant({ accountId: String(userId), clientId });
    const missing = missingScopes(details);
    if (missing.oidc.length) target.addOIDCScope(missing.oidc.join(' '));
    for (const [indicator, scopes] of Object.entries(missing.resources)) grantScopes(target, indicator, scopes);
    // Asked again only for what was requested; nothing missing means the request only re-confirms.
    const resource = typeof details.params.resource === 'string' ? details.params.resource : server.resource;
    if (!missing.all.length)
      grantScopes(
        target,
        resource,
        String(details.params.scope ?? '')
          .split(' ')
          .filter(Boolean),
      );
    const grantId = await target.save();
    await rememberConsent(db, userId, clientId, grantId);
    return grantId;
  }

  app.register(async (pages) => {
    usePageErrors(pages);

    pages.get('/o/interaction/:uid/', async (request, reply) => {
      const details = await load(request, reply);
      if (!details) return renderError(reply, 400, EXPIRED, '/accounts/profile/');
      const user = request.identity.user;
      if (!user) return redirectToLogin(reply, interactionPath(details.uid));
      if (details.prompt.name === 'login') return finishLogin(request, reply, user.id);
      if (details.prompt.name !== 'consent') return renderError(reply, 400, EXPIRED);
      if (details.session?.accountId !== String(user.id)) {
        // Another user logged in since the provider session began: sign the provider session in as them.
        return finishLogin(request, reply, user.id);
      }
      if (details.deviceCode) {
        return finish(request, reply, { consent: { grantId: await approve(details, user.id) } });
      }
      const client = await provider.Client.find(String(details.params.client_id));
      if (!client) return renderError(reply, 400, EXPIRED);
      const requested = String(details.params.scope ?? '')
        .split(' ')
        .filter(Boolean);
      const redirectUri = String(details.params.redirect_uri ?? '');
      // The decision's redirect chain ends at the client's redirect URI: allow that origin as a
      // form target, or Chromium's form-action 'self' would stop the browser on the way back.
      const origin = URL.parse(redirectUri)?.origin;
      reply.header('X-OAuth-Form-Target', origin ?? '');
      return renderPage(reply, 'oauth/views/consent', {
        title: 'Authorize access',
        ...consentFacts(client, redirectUri),
        scopes: requested.map((name) => ({ name, description: ctx.scopes.describe(name) })),
        action: interactionPath(details.uid),
      });
    });

    pages.post('/o/interaction/:uid/', async (request, reply) => {
      verifyCsrf(request);
      const details = await load(request, reply);
      if (!details) return renderError(reply, 400, EXPIRED);
      const user = request.identity.user;
      if (!user) return redirectToLogin(reply, interactionPath(details.uid));
      if (details.prompt.name !== 'consent' || details.session?.accountId !== String(user.id)) {
        return renderError(reply, 400, EXPIRED);
      }
      const decision = formString(request, 'decision');
      if (decision === 'approve') {
        return finish(request, reply, { consent: { grantId: await approve(details, user.id) } });
      }
      if (decision === 'deny') {
        return finish(request, reply, {
          error: 'access_denied',
          error_description: 'The user denied the authorization request.',
        });
      }
      return renderError(reply, 400, 'Choose Approve or Deny.');
    });

    // renderPage's Content-Security-Policy allows forms to post to this site only; the consent
    // page's decision redirects on to the client, whose origin is added here (see above).
    pages.addHook('onSend', async (_request, reply, payload) => {
      const target = reply.getHeader('X-OAuth-Form-Target');
      if (target === undefined) return payload;
      reply.removeHeader('X-OAuth-Form-Target');
      const csp = reply.getHeader('Content-Security-Policy');
      if (typeof csp === 'string' && typeof target === 'string' && /^https?:\/\/[^\s;']+$/.test(target)) {
        reply.header('Content-Security-Policy', csp.replace("form-action 'self'", `form-action 'self' ${target}`));
      }
      return payload;
    });
  });
}
