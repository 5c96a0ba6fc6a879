// GET /api/v1/teams/{team_id}/audit-log/: a team's audit log for its owners and admins (a member
// gets 403, anyone else 404, as the other team routes), newest first, cursor-paginated like the
// delivery log. Read-only: no route edits or deletes an entry.
import { Type } from '@sinclair/typebox';
import type { AppContext, TypedApp } from '../app-context.ts';
import { CursorPageOf, CursorQuery, cursorPage } from '../http/cursor.ts';
import { requireUser } from '../http/identity.ts';
import { DateTime, ProblemRef, authErrors } from '../http/schemas.ts';
import { ForbiddenError, NotFoundError } from '../util/domain-errors.ts';
import { AUDIT_ACTION_NAMES } from './actions.ts';
import { readAuditFilters } from './filters.ts';
import { auditEntriesQuery, auditEntryView } from './store.ts';

/**
 * The caller's team and role when they are an active member, else undefined. Given by whoever
 * builds the app (the teams capability's teamForMember), so that this folder, which the teams
 * services write through, does not import them back.
 */
export type TeamAccess = (
  db: AppContext['db']['kysely'],
  teamId: string,
  userId: number,
) => Promise<{ id: string; role: string } | undefined>;

const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);

export const AuditEntry = Type.Object(
  {
    id: Type.Integer(),
    occurred_at: DateTime,
    action: Type.String({ description: `One of: ${AUDIT_ACTION_NAMES.join(', ')}` }),
    actor: Type.Object({
      type: Type.Union([Type.Literal('user'), Type.Literal('system')]),
      id: Type.Union([Type.Integer({ description: 'The user id' }), Type.Null()]),
      email: Nullable(Type.String({ description: 'The e-mail address the user had then' })),
    }),
    credential: Type.Union(
      [
        Type.Object({
          type: Type.Union(['session', 'pat', 'oauth', 'jwt', 'cli'].map((kind) => Type.Literal(kind))),
          id: Nullable(
            Type.String({
              description: "The credential's id (never the credential); for cli, the operating-system account",
            }),
          ),
        }),
        Type.Null(),
      ],
      { description: 'What proved the actor; null when the service acted on its own' },
    ),
    target: Type.Object({ type: Type.String(), id: Type.String() }),
    context: Type.Object({
      ip: Nullable(Type.String()),
      user_agent: Nullable(Type.String()),
      request_id: Nullable(Type.String()),
    }),
    data: Type.Object(
      {},
      { additionalProperties: true, description: 'Before/after of the changed fields; never a secret' },
    ),
  },
  { $id: 'AuditEntry' },
);

const Params = Type.Object({ team_id: Type.String({ description: 'Team UUID' }) });
const Query = Type.Object({
  ...CursorQuery.properties,
  action: Type.Optional(Type.String({ description: 'Only this action' })),
  actor_id: Type.Optional(Type.String({ description: 'Only changes made by this user id' })),
  since: Type.Optional(Type.String({ description: 'ISO 8601 date or date-time with a zone: entries at or after it' })),
  until: Type.Optional(Type.String({ description: 'ISO 8601 date or date-time with a zone: entries before it' })),
});

export function registerAuditRoutes(app: TypedApp, ctx: AppContext, teamAccess: TeamAccess) {
  const { db, config } = ctx;
  app.addSchema(AuditEntry);

  app.get(
    '/api/v1/teams/:team_id/audit-log/',
    {
      config: { scopes: ['read:teams'] },
      schema: {
        operationId: 'list_audit_entries',
        summary: "The team's audit log, newest first, cursor-paginated (owner or admin)",
        description:
          'Every change to the team, recorded in the same transaction as the change. Filters: `action`, ' +
          '`actor_id`, `since` (inclusive) and `until` (exclusive); a value that is not what the filter takes is 400.',
        tags: ['teams'],
        params: Params,
        querystring: Query,
        response: {
          200: CursorPageOf(Type.Ref('AuditEntry')),
          400: { ...ProblemRef, description: 'A filter, the cursor or page_size is invalid' },
          ...authErrors,
          404: { ...ProblemRef, description: 'Unknown team, or the caller is not a member' },
        },
      },
    },
    async (request) => {
      const team = await teamAccess(db.kysely, request.params.team_id, requireUser(request).user.id);
      if (!team) throw new NotFoundError();
      if (team.role !== 'owner' && team.role !== 'admin')
        throw new ForbiddenError('Only owners and admins of the team can read its audit log.');
      const query = auditEntriesQuery(db.kysely, team.id, readAuditFilters(request.query));
      const page = await cursorPage({
        request,
        query,
        baseUrl: config.baseUrl,
        secret: config.secretKey!,
        createdAtColumn: 'occurred_at',
      });
      return { ...page, results: page.results.map(auditEntryView) };
    },
  );
}
