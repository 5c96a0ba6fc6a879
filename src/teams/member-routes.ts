// Member management: change a member's role, remove a member (or leave). Rules in policy.ts.
import { Type } from '@sinclair/typebox';
import type { AppContext, TypedApp } from '../app-context.ts';
import { requestActor } from '../audit/actor.ts';
import { requireUser } from '../http/identity.ts';
import { ProblemRef, authErrors } from '../http/schemas.ts';
import { NotFoundError } from '../util/domain-errors.ts';
import { changeRole, removeMember } from './members.ts';
import { ChangeRoleBody, MemberParams, badRequestResponse, conflictResponse } from './schemas.ts';
import { teamForMember, type Role } from './teams.ts';

const notFoundMember = {
  404: { ...ProblemRef, description: 'Unknown team, the caller is not a member, or the user is not a member' },
};
const lastOwner = conflictResponse('The change would leave the team without an owner');

export function registerMemberRoutes(app: TypedApp, { db, clientAddresses }: AppContext) {
  app.patch(
    '/api/v1/teams/:id/members/:user_id/',
    {
      config: { scopes: ['write:teams'] },
      schema: {
        operationId: 'set_member_role',
        summary: "Change a member's role (owners: anyone; admins: members only, and only to member)",
        tags: ['teams'],
        params: MemberParams,
        body: ChangeRoleBody,
        response: { 200: Type.Ref('Member'), ...badRequestResponse, ...authErrors, ...notFoundMember, ...lastOwner },
      },
    },
    async (request) => {
      const actorId = requireUser(request).user.id;
      const team = await teamForMember(db.kysely, request.params.id, actorId);
      if (!team) throw new NotFoundError();
      const by = requestActor(request, clientAddresses);
      return changeRole(db.kysely, team.id, actorId, request.params.user_id, request.body.role as Role, by); // role: validated by the schema enum
    },
  );

  app.delete(
    '/api/v1/teams/:id/members/:user_id/',
    {
      config: { scopes: ['write:teams'] },
      schema: {
        operationId: 'remove_member',
        summary: 'Remove a member (owners: anyone; admins: members; anyone: themself). 204 on success',
        tags: ['teams'],
        params: MemberParams,
        response: {
          204: Type.Null({ description: 'Removed' }),
          ...badRequestResponse,
          ...authErrors,
          ...notFoundMember,
          ...lastOwner,
        },
      },
    },
    async (request, reply) => {
      const actorId = requireUser(request).user.id;
      const team = await teamForMember(db.kysely, request.params.id, actorId);
      if (!team) throw new NotFoundError();
      await removeMember(db.kysely, team.id, actorId, request.params.user_id, requestActor(request, clientAddresses));
      return reply.code(204).send(null);
    },
  );
}
