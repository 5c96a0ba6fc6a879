// Operators' API on the suppression list: staff users with the `admin` scope list active suppressions
// (cursor-paginated, newest first) and release one. A release is recorded with who and when; an event that
// happened before it never re-suppresses the address (suppressions.ts).
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { AppContext, TypedApp } from '../app-context.ts';
import { CursorPageOf, CursorQuery, cursorPage } from '../http/cursor.ts';
import { requireUser } from '../http/identity.ts';
import { ProblemRef, authErrors } from '../http/schemas.ts';
import { ForbiddenError, NotFoundError, ValidationError } from '../util/domain-errors.ts';
import { parseOneAddress } from './addresses.ts';
import { mailLog } from './log.ts';
import { releaseSuppression, suppressionView } from './suppressions.ts';

const Suppression = Type.Object(
  {
    email: Type.String(),
    reason: Type.Union([Type.Literal('bounce'), Type.Literal('complaint')]),
    event_key: Type.Union([Type.String(), Type.Null()], { description: 'The provider event that caused it' }),
    occurred_at: Type.String({ format: 'date-time', description: 'When the bounce or complaint happened' }),
    created_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'Suppression' },
);

function requireStaff(request: FastifyRequest) {
  if (!request.identity.user?.is_staff) throw new ForbiddenError('Only staff users may manage the suppression list.');
}

// The body is optional on DELETE, so it is read here rather than by a route schema (which would require one).
function releaseReason(body: unknown): string | undefined {
  if (body === undefined || body === null) return undefined;
  const reason = typeof body === 'object' && !Array.isArray(body) ? (body as { reason?: unknown }).reason : null;
  const extra = typeof body === 'object' && body !== null ? Object.keys(body).filter((key) => key !== 'reason') : [];
  if (
    (reason !== undefined && typeof reason !== 'string') ||
    extra.length > 0 ||
    (typeof reason === 'string' && reason.length > 1000)
  ) {
    throw new ValidationError('Request is invalid.', [
      { field: 'reason', message: 'Optional; a string of at most 1000 characters, the only field.' },
    ]);
  }
  return reason?.trim();
}

export function registerSuppressionAdminRoutes(app: TypedApp, ctx: AppContext) {
  const { db, config } = ctx;
  app.addSchema(Suppression);
  app.get(
    '/api/v1/admin/suppressions/',
    {
      config: { scopes: ['admin'] },
      schema: {
        operationId: 'list_suppressions',
        summary: 'Active suppressed addresses, newest first (staff only)',
        tags: ['admin'],
        querystring: Type.Intersect([
          CursorQuery,
          Type.Object({ email: Type.Optional(Type.String({ description: 'Only this address' })) }),
        ]),
        response: { 200: CursorPageOf(Type.Ref('Suppression')), 400: ProblemRef, ...authErrors },
      },
    },
    async (request) => {
      requireStaff(request);
      let query = db.kysely.selectFrom('mail_suppressions').selectAll().where('released_at', 'is', null);
      const email = (request.query as { email?: string }).email;
      if (email !== undefined) query = query.where('email', '=', parseOneAddress(email) ?? email.trim().toLowerCase());
      const page = await cursorPage({ request, query, baseUrl: config.baseUrl, secret: config.secretKey! });
      return { ...page, results: page.results.map(suppressionView) };
    },
  );

  app.delete(
    '/api/v1/admin/suppressions/:email/',
    {
      config: { scopes: ['admin'] },
      schema: {
        operationId: 'release_suppression',
        summary: 'Release a suppressed address so mail to it is sent again (staff only)',
        description: 'Optional JSON body `{"reason": "…"}`, recorded with the releasing user and the time.',
        tags: ['admin'],
        params: Type.Object({ email: Type.String({ description: 'The suppressed address' }) }),
        response: {
          204: Type.Null(),
          ...authErrors,
          404: { ...ProblemRef, description: 'The address is not suppressed' },
        },
      },
    },
    async (request, reply) => {
      requireStaff(request);
      const email = parseOneAddress(request.params.email);
      if (!email) throw new NotFoundError('The address is not suppressed.');
      const user = requireUser(request).user;
      const reason = releaseReason(request.body) || 'released through the admin API';
      const by = `user:${user.id} ${user.email}`;
      if (!(await releaseSuppression(db.kysely, email, by, reason)))
        throw new NotFoundError('The address is not suppressed.');
      mailLog(ctx).warn({ email, by, reason }, 'suppression released');
      return reply.code(204).send(null);
    },
  );
}
