import { sql } from 'kysely';
import type { AppContext, TypedApp } from '../app-context.ts';

/** Liveness (no I/O) and readiness (the database answers) probes for load balancers and orchestrators. */
export function registerHealthRoutes(app: TypedApp, { db }: AppContext) {
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { hide: true } }, async (request, reply) => {
    try {
      await sql`select 1`.execute(db.kysely);
      return { status: 'ok' };
    } catch (error) {
      request.log.warn({ err: error }, 'readiness check failed: database unreachable');
      return reply.code(503).send({ status: 'unavailable', detail: 'The database does not answer.' });
    }
  });
}
