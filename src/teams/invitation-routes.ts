// Invitations API: create (Idempotency-Key capable), list and revoke for owners and admins; accept
// for the invited user. The browser side of accepting is pages.ts (/invitations/<token>/).
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { AppContext, TypedApp } from '../app-context.ts';
import { isValidEmail, normaliseEmail } from '../accounts/email.ts';
import { requestActor } from '../audit/actor.ts';
import { requireUser } from '../http/identity.ts';
import { pageEnvelope, pageRequest } from '../http/pagination.ts';
import { PageOf, PageQuery, ProblemRef, authErrors } from '../http/schemas.ts';
import { ForbiddenError, NotFoundError, ValidationError } from '../util/domain-errors.ts';
import { containsLink } from '../util/links.ts';
import { isUuid } from '../util/uuid.ts';
import {
  acceptInvitation,
  createInvitation,
  listInvitations,
  revokeInvitation,
  type InvitableRole,
} from './invitations.ts';
import { refuseInvitationAccess, refuseInvite } from './policy.ts';
import {
  AcceptInvitationBody,
  CreateInvitationBody,
  InvitationParams,
  InvitationsParams,
  badRequestResponse,
  conflictResponse,
  notFoundResponse,
} from './schemas.ts';
import { teamForMember } from './teams.ts';

/** Trims the optional message; refuses links and control characters other than line breaks. */
export function cleanMessage(message: string | undefined): string | null {
  const text = message?.replace(/\r\n?/g, '\n').trim();
  if (!text) return null;
  if (/[\u0000-\u0009\u000b-\u001f\u007f]/.test(text)) {
    throw new ValidationError('Request is invalid.', [
      { field: 'message', message: 'Control characters are not allowed.' },
    ]);
  }
  if (containsLink(text)) {
    throw new ValidationError('Request is invalid.', [
      { field: 'message', message: 'Links are not allowed in the message.' },
    ]);
  }
  return text;
}

/** `owner` gets its own message instead of the schema's generic "must be equal to one of the allowed values". */
async function refuseOwnerRole(request: FastifyRequest) {
  const body = request.body as { role?: unknown } | null;
  if (body && typeof body === 'object' && body.role === 'owner') {
    throw new ValidationError('Request is invalid.', [
      {
        field: 'role',
        message:
          'The owner role cannot be given by invitation; invite an admin or member and make them an owner once they have joined.',
      },
    ]);
  }
}

export function registerInvitationRoutes(app: TypedApp, ctx: AppContext) {
  const { db, config } = ctx;

  /** The caller's team if they may manage its invitations: 404 for non-members, 403 for members. */
  async function managedTeam(teamId: string, userId: number) {
    const team = await teamForMember(db.kysely, teamId, userId);
    if (!team) throw new NotFoundError();
    const refusal = refuseInvitationAccess(team.role);
    if (refusal) throw new ForbiddenError(refusal);
    return team;
  }

  app.post(
    '/api/v1/teams/:team_id/invitations/',
    {
      config: { scopes: ['write:teams'], idempotent: true },
      preValidation: refuseOwnerRole,
      schema: {
        operationId: 'create_invitation',
        summary: 'Invite an e-mail address to the team (owners: admin or member; admins: member). Sends the e-mail',
        description:
          'Replaces a pending invitation for the same address (its link stops working). Supports the ' +
          '`Idempotency-Key` header: a retry with the same key and body replays the first answer.',
        tags: ['invitations'],
        params: InvitationsParams,
        body: CreateInvitationBody,
        response: {
          201: Type.Ref('Invitation'),
          ...badRequestResponse,
          ...authErrors,
          ...notFoundResponse,
          ...conflictResponse(
            'The address already belongs to a member (or the Idempotency-Key was reused with another body)',
          ),
        },
      },
    },
    async (request, reply) => {
      const inviter = requireUser(request).user;
      const team = await teamForMember(db.kysely, request.params.team_id, inviter.id);
      if (!team) throw new NotFoundError();
      // The type provider reads schemas with `typebox`, not `@sinclair/typebox`, so it cannot see the
      // string enum's static type; the schema has already validated the value.
      const role = request.body.role as InvitableRole;
      const refusal = refuseInvite(team.role, role);
      if (refusal) throw new ForbiddenError(refusal);
      const email = normaliseEmail(request.body.email);
      if (!isValidEmail(email))
        throw new ValidationError('Request is invalid.', [{ field: 'email', message: 'Not a valid e-mail address.' }]);
      const invitation = await createInvitation(
        ctx,
        {
          team,
          inviter,
          email,
          role,
          message: cleanMessage(request.body.message),
        },
        requestActor(request, ctx.clientAddresses),
      );
      return reply.code(201).send(invitation);
    },
  );

  app.get(
    '/api/v1/teams/:team_id/invitations/',
    {
      config: { scopes: ['read:teams', 'write:teams'] },
      schema: {
        operationId: 'list_invitations',
        summary: "The team's open invitations (pending or expired), newest first (owner or admin)",
        tags: ['invitations'],
        params: InvitationsParams,
        querystring: PageQuery,
        response: { 200: PageOf(Type.Ref('Invitation')), ...authErrors, ...notFoundResponse },
      },
    },
    async (request) => {
      const team = await managedTeam(request.params.team_id, requireUser(request).user.id);
      const paging = pageRequest(request);
      const { count, rows } = await listInvitations(db.kysely, team.id, paging.limit, paging.offset);
      return pageEnvelope(config.baseUrl, request, paging, count, rows);
    },
  );

  app.delete(
    '/api/v1/teams/:team_id/invitations/:id/',
    {
      config: { scopes: ['write:teams'] },
      schema: {
        operationId: 'revoke_invitation',
        summary: 'Revoke a pending invitation; its link stops working (owner or admin). 204 on success',
        tags: ['invitations'],
        params: InvitationParams,
        response: {
          204: Type.Null({ description: 'Revoked' }),
          ...authErrors,
          404: { ...ProblemRef, description: 'Unknown team or invitation, or the invitation is no longer pending' },
        },
      },
    },
    async (request, reply) => {
      const team = await managedTeam(request.params.team_id, requireUser(request).user.id);
      if (!isUuid(request.params.id)) throw new NotFoundError('No pending invitation has that id.');
      await revokeInvitation(
        db.kysely,
        team.id,
        request.params.id.toLowerCase(),
        requestActor(request, ctx.clientAddresses),
      );
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/api/v1/invitations/accept/',
    {
      config: { scopes: ['write:teams'] },
      schema: {
        operationId: 'accept_invitation',
        summary:
          "Accept an invitation with the token from its link; the caller's verified e-mail must be the invited address",
        tags: ['invitations'],
        body: AcceptInvitationBody,
        response: {
          200: Type.Ref('Team'),
          ...badRequestResponse,
          ...authErrors,
          403: {
            ...ProblemRef,
            description:
              'The invitation is for another address, or the e-mail is not verified (or the scope is missing)',
          },
          404: { ...ProblemRef, description: 'The token is not valid' },
          ...conflictResponse('The caller is already a member'),
          410: { ...ProblemRef, description: 'The invitation was used, revoked, replaced, or has expired' },
        },
      },
    },
    async (request) => {
      const userId = requireUser(request).user.id;
      const { team } = await acceptInvitation(
        ctx,
        request.body.token,
        userId,
        requestActor(request, ctx.clientAddresses),
      );
      return teamForMember(db.kysely, team.id, userId);
    },
  );
}
