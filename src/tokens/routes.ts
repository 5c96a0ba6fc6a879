// The tokens capability's HTTP side: the token page, and JWT issuance with its JWKS and resolver.
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app-context.ts';
import { usePageErrors } from '../web/render.ts';
import { registerTokenPage } from './page.ts';

export async function registerTokenRoutes(app: FastifyInstance, ctx: AppContext) {
  await app.register(async (pages) => {
    usePageErrors(pages);
    registerTokenPage(pages, ctx);
  });
}
