// The tokens capability's HTTP side: the token page, and JWT issuance with its JWKS and resolver.
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app-context.ts';
import { usePageErrors } from '../web/render.ts';
import { JwtResolver } from './jwt.ts';
import { registerJwtRoutes } from './jwt-routes.ts';
import { registerTokenPage } from './page.ts';

export async function registerTokenRoutes(app: FastifyInstance, ctx: AppContext) {
  ctx.authenticator.addBearer(new JwtResolver(ctx));
  // Knobs that weaken a default say so once at start.
  const settings = ctx.config.accounts;
  if (!settings.requireVerifiedEmailForTokens)
    app.log.warn('SERVICE_API_TOKEN_REQUIRE_VERIFIED_EMAIL is off: unverified users can get PATs and JWTs');
  if (!settings.patRequireRecentReauth)
    app.log.warn('SERVICE_PAT_REQUIRE_RECENT_REAUTH is off: PATs can be created without re-authentication');
  if (!settings.jwtRequireMfa)
    app.log.warn('SERVICE_JWT_REQUIRE_MFA is off: JWTs are issued on the password alone for TOTP users');
  registerJwtRoutes(app, ctx);
  await app.register(async (pages) => {
    usePageErrors(pages);
    registerTokenPage(pages, ctx);
  });
}
