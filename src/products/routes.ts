import { Type } from '@sinclair/typebox';
import type { AppContext, TypedApp } from '../app-context.ts';
import { pageEnvelope, pageRequest } from '../http/pagination.ts';
import { DateTime, PageOf, PageQuery, ProblemRef, authErrors } from '../http/schemas.ts';

const Product = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  sku: Type.String(),
  price: Type.String({ description: 'Decimal amount as a string, e.g. "49.00" (no float rounding)' }),
  created_at: DateTime,
});

/** The demo resource: a read-only, seeded list that shows pagination and scopes at work. */
export function registerProductRoutes(app: TypedApp, { db, config }: AppContext) {
  app.get(
    '/api/v1/products/',
    {
      config: { scopes: ['read:products'] },
      schema: {
        operationId: 'list_products',
        summary: 'Demo products, ordered by id',
        tags: ['products'],
        querystring: PageQuery,
        response: { 200: PageOf(Product), ...authErrors, 404: { ...ProblemRef, description: 'Invalid page' } },
      },
    },
    async (request) => {
      const paging = pageRequest(request);
      const [{ count }, rows] = await Promise.all([
        db.kysely
          .selectFrom('products')
          .select((eb) => eb.fn.countAll<number>().as('count'))
          .executeTakeFirstOrThrow(),
        db.kysely.selectFrom('products').selectAll().orderBy('id').limit(paging.limit).offset(paging.offset).execute(),
      ]);
      return pageEnvelope(config.baseUrl, request, paging, Number(count), rows);
    },
  );
}
