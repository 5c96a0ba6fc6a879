// The teams API: list/read teams and members, create and update teams. Member management is in
// member-routes.ts, invitations in invitation-routes.ts.
import { Type } from '@sinclair/typebox';
import type { AppContext, TypedApp } from '../app-context.ts';
import { requestActor } from '../audit/actor.ts';
import { requireUser } from '../http/identity.ts';
import { CursorPageOf, CursorQuery, cursorPage } from '../http/cursor.ts';
import { PAGE_NUMBER_MAX_DEPTH, pageEnvelope, pageRequest } from '../http/pagination.ts';
import { PageOf, PageQuery, ProblemRef, authErrors } from '../http/schemas.ts';
import { ForbiddenError, NotFoundError, ValidationError } from '../util/domain-errors.ts';
import { registerInvitationRoutes } from './invitation-routes.ts';
import { registerMemberRoutes } from './member-routes.ts';
import { registerInvitationPages } from './pages.ts';
import { refuseTeamUpdate } from './policy.ts';
import {
  CreateTeamBody,
  Invitation,
  Member,
  Team,
  TeamParams,
  TeamSummary,
  UpdateTeamBody,
  badRequestResponse,
  conflictResponse,
  notFoundResponse,
} from './schemas.ts';
import { createTeam, listMembers, listTeamsOfUser, membersQuery, teamForMember, updateTeam } from './teams.ts';

export { Team };

/** Every teams route: reads, team writes, members, invitations (API and the accept page). */
export function registerTeamRoutes(app: TypedApp, ctx: AppContext) {
  app.addSchema(Team);
  app.addSchema(Member);
  app.addSchema(Invitation);
  registerTeamReadRoutes(app, ctx);
  registerTeamWriteRoutes(app, ctx);
  registerMemberRoutes(app, ctx);
  registerInvitationRoutes(app, ctx);
  registerInvitationPages(app, ctx);
}

/** The member list's query string: page-number (`page`) or cursor (`cursor`, `page_size`) pagination. */
const MemberListQuery = Type.Object({ ...PageQuery.properties, ...CursorQuery.properties });

function registerTeamReadRoutes(app: TypedApp, { db, config }: AppContext) {
  app.get(
    '/api/v1/teams/',
    {
      config: { scopes: ['read:teams'] },
      schema: {
        operationId: 'list_teams',
        summary: 'Teams the caller belongs to (active teams only), ordered by name',
        tags: ['teams'],
        querystring: PageQuery,
        response: { 200: PageOf(TeamSummary), ...authErrors, 404: { ...ProblemRef, description: 'Invalid page' } },
      },
    },
    async (request) => {
      const paging = pageRequest(request);
      const { count, rows } = await listTeamsOfUser(
        db.kysely,
        requireUser(request).user.id,
        paging.limit,
        paging.offset,
      );
      return pageEnvelope(config.baseUrl, request, paging, count, rows);
    },
  );

  app.get(
    '/api/v1/teams/:id/',
    {
      config: { scopes: ['read:teams'] },
      schema: {
        operationId: 'get_team',
        summary: 'One team the caller belongs to',
        tags: ['teams'],
        params: TeamParams,
        response: { 200: Type.Ref('Team'), ...authErrors, ...notFoundResponse },
      },
    },
    async (request) => {
      const team = await teamForMember(db.kysely, request.params.id, requireUser(request).user.id);
      if (!team) throw new NotFoundError();
      return team;
    },
  );

  app.get(
    '/api/v1/teams/:id/members/',
    {
      config: { scopes: ['read:teams'] },
      schema: {
        operationId: 'list_members',
        summary: `Members of a team the caller belongs to: by page number in joining order (pages 1 to ${PAGE_NUMBER_MAX_DEPTH}), or with page_size/cursor newest joiner first`,
        tags: ['teams'],
        params: TeamParams,
        querystring: MemberListQuery,
        response: {
          200: Type.Union([PageOf(Type.Ref('Member')), CursorPageOf(Type.Ref('Member'))]),
          400: {
            ...ProblemRef,
            description: `A page past ${PAGE_NUMBER_MAX_DEPTH} (use the cursor), page with page_size or cursor, an invalid cursor or page_size`,
          },
          ...authErrors,
          ...notFoundResponse,
        },
      },
    },
    async (request) => {
      const team = await teamForMember(db.kysely, request.params.id, requireUser(request).user.id);
      if (!team) throw new NotFoundError();
      const { page, cursor, page_size: pageSize } = request.query;
      if (cursor !== undefined || pageSize !== undefined) {
        if (page !== undefined) {
          throw new ValidationError(
            'Use page (page-number pagination) or page_size and cursor (cursor pagination), not both.',
            [{ field: 'page', message: 'Not with page_size or cursor.' }],
          );
        }
        return cursorPage({
          request,
          query: membersQuery(db.kysely, team.id),
          baseUrl: config.baseUrl,
          secret: config.secretKey!,
          createdAtColumn: 'm.joined_at',
          idColumn: 'm.user_id',
          idField: 'id',
        });
      }
      const paging = pageRequest(request, { maxDepth: PAGE_NUMBER_MAX_DEPTH });
      const { count, rows } = await listMembers(db.kysely, team.id, paging.limit, paging.offset);
      return pageEnvelope(config.baseUrl, request, paging, count, rows);
    },
  );
}

function registerTeamWriteRoutes(app: TypedApp, { db, config, clientAddresses }: AppContext) {
  app.post(
    '/api/v1/teams/',
    {
      config: { scopes: ['write:teams'] },
      schema: {
        operationId: 'create_team',
        summary: 'Create a team; the caller becomes its owner',
        tags: ['teams'],
        body: CreateTeamBody,
        response: {
          201: Type.Ref('Team'),
          ...badRequestResponse,
          ...authErrors,
          ...conflictResponse('The slug is taken'),
        },
      },
    },
    async (request, reply) => {
      const userId = requireUser(request).user.id;
      const created = await createTeam(
        db.kysely,
        { ...request.body, ownerId: userId },
        requestActor(request, clientAddresses),
      );
      const team = await teamForMember(db.kysely, created.id, userId);
      return reply.code(201).header('Location', `${config.baseUrl}/api/v1/teams/${created.id}/`).send(team);
    },
  );

  app.patch(
    '/api/v1/teams/:id/',
    {
      config: { scopes: ['write:teams'] },
      schema: {
        operationId: 'update_team',
        summary: 'Rename a team or change its slug (owner or admin)',
        tags: ['teams'],
        params: TeamParams,
        body: UpdateTeamBody,
        response: {
          200: Type.Ref('Team'),
          ...badRequestResponse,
          ...authErrors,
          ...notFoundResponse,
          ...conflictResponse('The slug is taken'),
        },
      },
    },
    async (request) => {
      const userId = requireUser(request).user.id;
      const team = await teamForMember(db.kysely, request.params.id, userId);
      if (!team) throw new NotFoundError();
      const refusal = refuseTeamUpdate(team.role);
      if (refusal) throw new ForbiddenError(refusal);
      await updateTeam(db.kysely, team.id, request.body, requestActor(request, clientAddresses));
      return teamForMember(db.kysely, team.id, userId);
    },
  );
}
