// The personal access token page /accounts/tokens/: list, create (raw token shown exactly once),
// revoke. Creating is gated by SERVICE_API_TOKEN_REQUIRE_VERIFIED_EMAIL and
// SERVICE_PAT_REQUIRE_RECENT_REAUTH (+ SERVICE_REAUTH_MAX_AGE_SECONDS).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../app-context.ts';
import { hasRecentReauth, redirectToLogin, redirectToReauth } from '../accounts/session-auth.ts';
import type { AuthUser } from '../http/identity.ts';
import { formList, formString } from '../web/forms.ts';
import { setOnce, takeOnce } from '../web/once.ts';
import { renderError, renderPage, seeOther, setNotice, verifyCsrf } from '../web/render.ts';
import { createPat, listPats, revokePat, type PatRecord } from './pats.ts';

const PAGE = '/accounts/tokens/';
export const NOT_VERIFIED = 'Email address is not verified.';

type Gate = 'unverified' | 'reauth' | null;

interface TokenForm {
  name: string;
  scopes: string[];
  expires_at: string;
}

const day = (iso: string | null, fallback: string) => (iso ? `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC` : fallback);

function rowView(token: PatRecord, now: number) {
  const expired = token.expires_at !== null && Date.parse(token.expires_at) <= now;
  return {
    id: token.id,
    name: token.name,
    prefix: token.prefix,
    scopes: token.scopes,
    created: day(token.created_at, ''),
    lastUsed: day(token.last_used_at, 'never'),
    expires: day(token.expires_at, 'never'),
    status: token.revoked_at ? 'revoked' : expired ? 'expired' : 'active',
  };
}

const todayUtc = () => new Date().toISOString().slice(0, 10);
const tomorrowUtc = () => new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);

/**
 * The expiry of a form date: the token is valid through that whole UTC day. The date must be after
 * today (UTC); null for no expiry; undefined when the value is not a usable date.
 */
export function expiryFromDate(value: string): string | null | undefined {
  if (value === '') return null;
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return undefined;
  const start = Date.parse(`${value}T00:00:00Z`);
  if (Number.isNaN(start) || new Date(start).toISOString().slice(0, 10) !== value) return undefined;
  if (value <= todayUtc()) return undefined;
  return new Date(start + 86_400_000).toISOString();
}

export function registerTokenPage(pages: FastifyInstance, ctx: AppContext) {
  const db = ctx.db.kysely;
  const settings = ctx.config.accounts;

  async function gateFor(request: FastifyRequest): Promise<Gate> {
    const session = request.identity.session;
    if (settings.requireVerifiedEmailForTokens && !session?.emailVerified) return 'unverified';
    if (settings.patRequireRecentReauth && !hasRecentReauth(request, settings.reauthMaxAgeSeconds)) return 'reauth';
    return null;
  }

  function scopesFor(user: AuthUser) {
    // `admin` is for staff; nobody else may put it on a token.
    return ctx.scopes.list().filter((scope) => scope.name !== 'admin' || user.is_staff);
  }

  async function show(
    request: FastifyRequest,
    reply: FastifyReply,
    user: AuthUser,
    extra: { error?: string; form?: TokenForm; created?: unknown } = {},
    status = 200,
  ) {
    const now = Date.now();
    return renderPage(
      reply,
      'tokens/views/tokens',
      {
        title: 'Personal access tokens',
        tokens: (await listPats(db, user.id)).map((token) => rowView(token, now)),
        gate: await gateFor(request),
        scopes: scopesFor(user),
        form: extra.form ?? { name: '', scopes: [], expires_at: '' },
        minDate: tomorrowUtc(),
        reauthMinutes: Math.round(settings.reauthMaxAgeSeconds / 60),
        created: extra.created ?? null,
        error: extra.error ?? null,
      },
      { status },
    );
  }

  pages.get(PAGE, async (request, reply) => {
    const user = request.identity.user;
    if (!user) return redirectToLogin(reply, PAGE);
    return show(request, reply, user, { created: takeOnce(request, reply, PAGE) });
  });

  pages.post(PAGE, async (request, reply) => {
    verifyCsrf(request);
    const user = request.identity.user;
    if (!user) return redirectToLogin(reply, PAGE);
    const gate = await gateFor(request);
    if (gate === 'unverified') return show(request, reply, user, { error: NOT_VERIFIED }, 403);
    if (gate === 'reauth') return redirectToReauth(reply, PAGE);
    const form: TokenForm = {
      name: formString(request, 'name', { max: 500 }),
      scopes: [...new Set(formList(request, 'scopes'))],
      expires_at: formString(request, 'expires_at', { max: 20 }),
    };
    const allowed = new Set(scopesFor(user).map((scope) => scope.name));
    let error: string | null = null;
    const expiresAt = expiryFromDate(form.expires_at);
    if (form.name === '') error = 'Give the token a name.';
    else if (form.name.length > 100) error = 'The name must be at most 100 characters.';
    else if (form.scopes.length === 0) error = 'Choose at least one scope.';
    else if (form.scopes.some((scope) => !allowed.has(scope))) error = 'Unknown scope.';
    else if (expiresAt === undefined) error = 'The expiry date must be a date after today.';
    if (error) return show(request, reply, user, { error, form }, 400);
    const { token } = await createPat(db, {
      userId: user.id,
      name: form.name,
      scopes: form.scopes,
      expiresAt: expiresAt ?? null,
    });
    setOnce(reply, PAGE, { name: form.name, token });
    return seeOther(reply, PAGE);
  });

  pages.post('/accounts/tokens/:id/revoke/', async (request, reply) => {
    verifyCsrf(request);
    const user = request.identity.user;
    if (!user) return redirectToLogin(reply, PAGE);
    const { id } = request.params as { id: string };
    if (!/^\d{1,15}$/.test(id) || !(await revokePat(db, Number(id), user.id))) {
      return renderError(reply, 404, 'No active token of yours has that id.', PAGE);
    }
    setNotice(reply, 'The token has been revoked.');
    return seeOther(reply, PAGE);
  });
}
