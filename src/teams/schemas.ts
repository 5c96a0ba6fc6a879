// TypeBox schemas of the teams API: they validate input, shape output and feed the OpenAPI document.
import { Type } from '@sinclair/typebox';
import { DateTime, ProblemRef } from '../http/schemas.ts';

/** A plain string enum (not a union of literals) so a bad value gives one clear validation error. */
const StringEnum = <T extends string>(values: readonly T[], description?: string) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], ...(description ? { description } : {}) });

export const RoleSchema = StringEnum(['owner', 'admin', 'member'] as const);
export const InvitableRoleSchema = StringEnum(
  ['admin', 'member'] as const,
  'The owner role is never given by invitation.',
);

export const TeamSummary = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  slug: Type.String(),
  role: RoleSchema,
});

export const Team = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    slug: Type.String(),
    role: { ...RoleSchema, description: "The caller's role in the team" },
    created_at: DateTime,
    updated_at: DateTime,
  },
  { $id: 'Team' },
);

export const Member = Type.Object(
  {
    id: Type.Integer({ description: 'User id' }),
    email: Type.String(),
    first_name: Type.String(),
    last_name: Type.String(),
    display_name: Type.String(),
    role: RoleSchema,
    joined_at: DateTime,
  },
  { $id: 'Member' },
);

export const Invitation = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    email: Type.String(),
    role: InvitableRoleSchema,
    status: StringEnum(['pending', 'expired', 'accepted', 'revoked', 'replaced'] as const),
    invited_by: Type.Union([Type.Integer(), Type.Null()], {
      description: 'User id of the inviter (null once that user is deleted)',
    }),
    created_at: DateTime,
    expires_at: DateTime,
  },
  { $id: 'Invitation' },
);

const Slug = Type.String({
  pattern: '^[a-z0-9](?:[a-z0-9-]{0,48}[a-z0-9])?$',
  description: '1 to 50 lowercase letters, digits and inner hyphens; unique across teams',
});
const TeamName = Type.String({ minLength: 1, maxLength: 100 });

export const CreateTeamBody = Type.Object(
  {
    name: TeamName,
    slug: Type.Optional({ ...Slug, description: `${Slug.description}; derived from the name when omitted` }),
  },
  { additionalProperties: false },
);
export const UpdateTeamBody = Type.Object(
  { name: Type.Optional(TeamName), slug: Type.Optional(Slug) },
  { additionalProperties: false },
);
export const ChangeRoleBody = Type.Object({ role: RoleSchema }, { additionalProperties: false });
export const CreateInvitationBody = Type.Object(
  {
    email: Type.String({ minLength: 3, maxLength: 254, description: 'Normalised: trimmed and lower-cased' }),
    role: InvitableRoleSchema,
    message: Type.Optional(
      Type.String({ maxLength: 500, description: 'Shown in the e-mail; plain text without links' }),
    ),
  },
  { additionalProperties: false },
);
export const AcceptInvitationBody = Type.Object(
  {
    token: Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'The token from the accept link /invitations/<token>/',
    }),
  },
  { additionalProperties: false },
);

export const TeamParams = Type.Object({ id: Type.String({ description: 'Team UUID' }) });
export const MemberParams = Type.Object({
  id: Type.String({ description: 'Team UUID' }),
  user_id: Type.Integer({ minimum: 1, maximum: 2147483647, description: 'User id' }),
});
export const InvitationsParams = Type.Object({ team_id: Type.String({ description: 'Team UUID' }) });
export const InvitationParams = Type.Object({
  team_id: Type.String({ description: 'Team UUID' }),
  id: Type.String({ description: 'Invitation UUID' }),
});

export const notFoundResponse = { 404: { ...ProblemRef, description: 'Unknown team, or the caller is not a member' } };
export const badRequestResponse = { 400: { ...ProblemRef, description: 'Invalid body: see `errors`' } };
export const conflictResponse = (description: string) => ({ 409: { ...ProblemRef, description } });
