import { Type } from '@sinclair/typebox';
import type { AppContext, TypedApp } from '../app-context.ts';
import { pageEnvelope, pageRequest } from '../http/pagination.ts';
import { notFound } from '../http/problem.ts';
import { DateTime, PageOf, PageQuery, ProblemRef, authErrors } from '../http/schemas.ts';
import { listMembers, listTeamsOfUser, teamForMember } from './teams.ts';

const RoleSchema = Type.Union([Type.Literal('owner'), Type.Literal('admin'), Type.Literal('member')]);
const TeamSummary = Type.Object({ id: Type.String({ format: 'uuid' }), name: Type.String(), slug: Type.String(), role: RoleSchema });
export const Team = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    slug: Type.String(),
    role: RoleSchema,
    created_at: DateTime,
    updated_at: DateTime,
  },
  { $id: 'Team' },
);
const Member = Type.Object({
  id: Type.Integer({ description: 'User id' }),
  email: Type.String(),
  first_name: Type.String(),
  last_name: Type.String(),
  display_name: Type.String(),
  role: RoleSchema,
  joined_at: DateTime,
});
const TeamParams = Type.Object({ id: Type.String({ description: 'Team UUID' }) });
const notFoundResponse = { 404: { ...ProblemRef, description: 'Unknown team, or not a member' } };

export function registerTeamReadRoutes(app: TypedApp, { db, config }: AppContext) {
  app.addSchema(Team);
  app.get(
    '/api/v1/teams/',
    {
      config: { scopes: ['read:teams'] },
      schema: {
        operationId: 'listTeams',
        summary: 'Teams the caller belongs to (active teams only), ordered by name',
        tags: ['teams'],
        querystring: PageQuery,
        response: { 200: PageOf(TeamSummary), ...authErrors, 404: { ...ProblemRef, description: 'Invalid page' } },
      },
    },
    async (request) => {
      const paging = pageRequest(request);
      const { count, rows } = await listTeamsOfUser(db.kysely, request.principal!.user.id, paging.limit, paging.offset);
      return pageEnvelope(config.baseUrl, request, paging, count, rows);
    },
  );

  app.get(
    '/api/v1/teams/:id/',
    {
      config: { scopes: ['read:teams'] },
      schema: {
        operationId: 'getTeam',
        summary: 'One team the caller belongs to',
        tags: ['teams'],
        params: TeamParams,
        response: { 200: Type.Ref('Team'), ...authErrors, ...notFoundResponse },
      },
    },
    async (request) => {
      const team = await teamForMember(db.kysely, request.params.id, request.principal!.user.id);
      if (!team) throw notFound();
      return team;
    },
  );

  app.get(
    '/api/v1/teams/:id/members/',
    {
      config: { scopes: ['read:teams'] },
      schema: {
        operationId: 'listTeamMembers',
        summary: 'Members of a team the caller belongs to, ordered by joining time',
        tags: ['teams'],
        params: TeamParams,
        querystring: PageQuery,
        response: { 200: PageOf(Member), ...authErrors, ...notFoundResponse },
      },
    },
    async (request) => {
      const team = await teamForMember(db.kysely, request.params.id, request.principal!.user.id);
      if (!team) throw notFound();
      const paging = pageRequest(request);
      const { count, rows } = await listMembers(db.kysely, team.id, paging.limit, paging.offset);
      return pageEnvelope(config.baseUrl, request, paging, count, rows);
    },
  );
}
