// POST /api/auth/token/ (password → JWT pair), refresh/ (rotation with reuse detection), revoke/,
// and the public keys at /.well-known/jwks.json. Bodies may be JSON or a urlencoded form.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { AppContext } from '../app-context.ts';
import { checkThrottle, clearFailures, recordFailure } from '../accounts/auth-throttle.ts';
import { normaliseEmail } from '../accounts/email.ts';
import { burnPasswordCheck, verifyPassword } from '../accounts/passwords.ts';
import { hasTotp, verifyTotpCode } from '../accounts/totp.ts';
import { findUserByEmail } from '../accounts/users.ts';
import { HttpProblem } from '../http/problem.ts';
import { ProblemRef } from '../http/schemas.ts';
import { parseScopeString } from '../http/scopes.ts';
import { throttledDetail } from '../http/throttle.ts';
import { UnauthenticatedError, ValidationError } from '../util/domain-errors.ts';
import { publicJwks } from './jwt-keys.ts';
import { issueTokenPair, refreshTokenPair, revokeRefreshToken } from './jwt.ts';

export const BAD_CREDENTIALS = 'Invalid e-mail address or password.';
export const NOT_VERIFIED = 'Email address is not verified.';
export const MFA_REQUIRED = 'This account uses two-factor authentication: send the current TOTP code as mfa_code.';
export const MFA_INVALID = 'The TOTP code (mfa_code) is invalid or was already used.';

const TokenRequest = Type.Object(
  {
    email: Type.String({ maxLength: 320 }),
    password: Type.String({ maxLength: 1000 }),
    mfa_code: Type.Optional(
      Type.String({
        maxLength: 20,
        description: 'The current TOTP code; required when the user has TOTP (recovery codes are not accepted)',
      }),
    ),
    scope: Type.Optional(
      Type.String({
        maxLength: 2000,
        description: "Space-separated scopes to narrow the token to; default: all of the user's",
      }),
    ),
  },
  { additionalProperties: false },
);
const RefreshRequest = Type.Object({ refresh: Type.String({ maxLength: 200 }) }, { additionalProperties: false });
const TokenPairSchema = Type.Object({
  access: Type.String({ description: 'JWT access token (EdDSA), for Authorization: Bearer' }),
  refresh: Type.String({ description: 'Opaque refresh token (svcr_…), single use' }),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer({ description: 'Seconds until the access token expires' }),
  scope: Type.String(),
});
const authFailure = {
  401: { ...ProblemRef, description: 'Refused (see detail)' },
  429: { ...ProblemRef, description: 'Throttled' },
};

function noStore(reply: FastifyReply) {
  reply.header('Cache-Control', 'no-store');
  reply.header('Pragma', 'no-cache');
}

export function registerJwtRoutes(app: FastifyInstance, ctx: AppContext) {
  const settings = ctx.config.accounts;

  app.post(
    '/api/auth/token/',
    {
      config: { throttle: 'auth' },
      schema: {
        operationId: 'issue_jwt',
        summary: 'Exchange e-mail and password (and TOTP code) for a JWT access token and a refresh token',
        tags: ['auth'],
        consumes: ['application/json', 'application/x-www-form-urlencoded'],
        body: TokenRequest,
        response: { 200: TokenPairSchema, 400: ProblemRef, ...authFailure },
      },
    },
    async (request, reply) => {
      const body = request.body as { email: string; password: string; mfa_code?: string; scope?: string };
      const email = normaliseEmail(body.email);
      const address = ctx.clientAddresses.of(request.raw);
      const throttle = await checkThrottle(ctx, 'jwt', email, address);
      if (throttle.locked) {
        throw new HttpProblem(429, throttledDetail(throttle.retryAfter), {
          headers: { 'Retry-After': String(throttle.retryAfter) },
        });
      }
      const user = email ? await findUserByEmail(ctx.db.kysely, email) : undefined;
      // Same argon2 work whether or not the address exists: the answer and its timing match.
      const passwordOk = user
        ? await verifyPassword(body.password, user.password_hash)
        : await burnPasswordCheck(body.password);
      if (!user || !passwordOk) {
        await recordFailure(ctx, 'jwt', email, address);
        throw new UnauthenticatedError(BAD_CREDENTIALS);
      }
      // The password was right: from here on the messages may say what is missing.
      if (user.is_active !== 1) throw new UnauthenticatedError('This account is inactive.');
      if (settings.requireVerifiedEmailForTokens && user.email_verified_at === null)
        throw new UnauthenticatedError(NOT_VERIFIED);
      if (settings.jwtRequireMfa && (await hasTotp(ctx, user.id))) {
        if (!body.mfa_code) throw new UnauthenticatedError(MFA_REQUIRED);
        if (!(await verifyTotpCode(ctx, user.id, body.mfa_code))) {
          await recordFailure(ctx, 'jwt', email, address);
          throw new UnauthenticatedError(MFA_INVALID);
        }
      }
      const available = ctx.scopes.names().filter((scope) => scope !== 'admin' || user.is_staff === 1);
      let scopes = available;
      if (body.scope !== undefined) {
        const wanted = parseScopeString(body.scope);
        const refused = wanted.filter((scope) => !available.includes(scope));
        if (wanted.length === 0 || refused.length > 0) {
          throw new ValidationError(
            refused.length
              ? `Unknown or unavailable scope(s): ${refused.join(', ')}.`
              : 'scope must name at least one scope.',
            [{ field: 'scope', message: 'Invalid scope.' }],
          );
        }
        scopes = wanted;
      }
      await clearFailures(ctx, 'jwt', email, address);
      noStore(reply);
      return issueTokenPair(ctx, user.id, scopes);
    },
  );

  app.post(
    '/api/auth/token/refresh/',
    {
      config: { throttle: 'auth' },
      schema: {
        operationId: 'refresh_jwt',
        summary: 'Spend a refresh token for a new pair (a reused refresh token revokes its family)',
        tags: ['auth'],
        consumes: ['application/json', 'application/x-www-form-urlencoded'],
        body: RefreshRequest,
        response: { 200: TokenPairSchema, 400: ProblemRef, ...authFailure },
      },
    },
    async (request, reply) => {
      const pair = await refreshTokenPair(ctx, (request.body as { refresh: string }).refresh);
      noStore(reply);
      return pair;
    },
  );

  app.post(
    '/api/auth/token/revoke/',
    {
      config: { throttle: 'auth' },
      schema: {
        operationId: 'revoke_jwt',
        summary: 'Revoke a refresh token and its family (204 also for an unknown token, as RFC 7009)',
        tags: ['auth'],
        consumes: ['application/json', 'application/x-www-form-urlencoded'],
        body: RefreshRequest,
        response: { 204: Type.Null(), 400: ProblemRef, 429: authFailure[429] },
      },
    },
    async (request, reply) => {
      await revokeRefreshToken(ctx, (request.body as { refresh: string }).refresh);
      return reply.code(204).send();
    },
  );

  app.get('/.well-known/jwks.json', { schema: { hide: true } }, async (_request, reply) => {
    reply.header('Cache-Control', 'public, max-age=300');
    return publicJwks(ctx);
  });
}
