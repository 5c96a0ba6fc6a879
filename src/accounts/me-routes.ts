import { Type } from '@sinclair/typebox';
import type { AppContext, TypedApp } from '../app-context.ts';
import { authErrors } from '../http/schemas.ts';
import { profileOf } from './users.ts';

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

export function registerMeRoutes(app: TypedApp, _ctx: AppContext) {
  app.addSchema(Profile);
  app.get(
    '/api/v1/me/',
    {
      config: { scopes: ['read:profile'] },
      schema: {
        operationId: 'getMe',
        summary: 'The authenticated user\'s profile',
        tags: ['profile'],
        response: { 200: Type.Ref('Profile'), ...authErrors },
      },
    },
    async (request) => profileOf(request.principal!.user),
  );
}
