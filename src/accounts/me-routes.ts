import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { AppContext, TypedApp } from '../app-context.ts';
import { requireUser } from '../http/identity.ts';
import { ProblemRef, authErrors } from '../http/schemas.ts';
import { ValidationError, type FieldError } from '../util/domain-errors.ts';
import { containsLink, hasControlCharacters } from '../util/links.ts';
import { PROFILE_FIELDS, PROFILE_NAME_MAX_LENGTH, updateProfileNames, type ProfileField } from './profile.ts';
import { findUserById, profileOf, toAuthUser } from './users.ts';

export const Profile = Type.Object(
  {
    id: Type.Integer(),
    email: Type.String({ format: 'email' }),
    first_name: Type.String(),
    last_name: Type.String(),
    display_name: Type.String(),
  },
  { $id: 'Profile' },
);

/** Fields of the profile that exist but cannot be changed here (e-mail changes need re-verification). */
const READ_ONLY = ['id', 'email'];

const NameField = (description: string) =>
  Type.Optional(
    Type.String({
      maxLength: PROFILE_NAME_MAX_LENGTH,
      description: `${description}; trimmed; no links or control characters`,
    }),
  );

const ProfileUpdate = Type.Object(
  {
    first_name: NameField('Given name'),
    last_name: NameField('Family name'),
    display_name: NameField('Name shown to others'),
  },
  { additionalProperties: false },
);

/** Read-only fields get their own message instead of the generic "Unknown field.". */
async function refuseReadOnlyFields(request: FastifyRequest) {
  const body = request.body;
  if (!body || typeof body !== 'object' || Array.isArray(body)) return;
  const present = READ_ONLY.filter((field) => Object.hasOwn(body, field));
  if (present.length > 0) {
    throw new ValidationError(
      'Request is invalid.',
      present.map((field) => ({ field, message: 'This field is read-only.' })),
    );
  }
}

/**
 * Trims the given names and refuses links and control characters (names are shown to other people).
 * Every bad field is reported (the profile page's profileProblem() stops at the first, for a form).
 */
function cleanNames(body: Partial<Record<ProfileField, string>>): Partial<Record<ProfileField, string>> {
  const errors: FieldError[] = [];
  const clean: Partial<Record<ProfileField, string>> = {};
  for (const field of PROFILE_FIELDS) {
    const value = body[field];
    if (value === undefined) continue;
    const text = value.trim();
    if (hasControlCharacters(text)) errors.push({ field, message: 'Control characters are not allowed.' });
    else if (containsLink(text)) errors.push({ field, message: 'Names cannot contain links.' });
    else clean[field] = text;
  }
  if (errors.length > 0) throw new ValidationError('Request is invalid.', errors);
  return clean;
}

export function registerMeRoutes(app: TypedApp, ctx: AppContext) {
  app.addSchema(Profile);
  app.get(
    '/api/v1/me/',
    {
      config: { scopes: ['read:profile'] },
      schema: {
        operationId: 'get_me',
        summary: "The authenticated user's profile",
        tags: ['profile'],
        response: { 200: Type.Ref('Profile'), ...authErrors },
      },
    },
    // Synchronous (reply.send, no promise): the identity already holds the profile.
    (request, reply) => {
      reply.send(profileOf(requireUser(request).user));
    },
  );

  app.patch(
    '/api/v1/me/',
    {
      config: { scopes: ['write:profile'] },
      preValidation: refuseReadOnlyFields,
      schema: {
        operationId: 'update_me',
        summary: "Update the authenticated user's names",
        description:
          'Only the fields sent change. A real change emits `user.profile.updated` to every active team of the ' +
          'user; a request that changes nothing emits nothing. `id` and `email` are read-only (400).',
        tags: ['profile'],
        body: ProfileUpdate,
        response: {
          200: Type.Ref('Profile'),
          400: { ...ProblemRef, description: 'Unknown or read-only field, too long, or a link in a name' },
          ...authErrors,
        },
      },
    },
    async (request) => {
      const user = requireUser(request).user;
      const wanted = cleanNames(request.body as Partial<Record<ProfileField, string>>);
      // One code path with the profile page: the change and its user.profile.updated events (one per
      // active team, none for a no-op) commit together in updateProfileNames. Only the fields sent
      // are written: a concurrent update of another field is not overwritten.
      await updateProfileNames(ctx, user.id, wanted);
      const row = await findUserById(ctx.db.kysely, user.id);
      if (!row) throw new Error('the authenticated user vanished');
      return profileOf(toAuthUser(row));
    },
  );
}
