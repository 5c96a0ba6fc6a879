// The tokens capability's HTTP side: the token page, and JWT issuance with its JWKS and resolver.
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app-context.ts';
import { usePageErrors } from '../web/render.ts';
import { JwtResolver } from './jwt.ts';
import { registerJwtRoutes } from './jwt-routes.ts';
import { registerTokenPage } from './page.ts';

export async function registerTokenRoutes(app: FastifyInstance, ctx: AppContext) {
  ctx.authenticator.addBearer(new JwtResolver(ctx));
  registerJwtRoutes(app, ctx);
  await app.register(async (pages) => {
    usePageErrors(pages);
    registerTokenPage(pages, ctx);
  });
}
