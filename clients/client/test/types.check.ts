// The type test: compiled (never run) by types.test.ts and by the repository's type-check. Correct
// calls compile and their answers are typed; each `@ts-expect-error` line is a call that must NOT
// compile. types.test.ts also compiles this file with the directives removed and expects exactly one
// error at each of those lines, so a directive cannot pass by accident (e.g. on a line that fails
// for another reason).
import { createClient, type Member } from '../src/index.ts';

const client = createClient({ baseUrl: 'http://localhost:8000', token: 'svc_example' });

export async function wellTyped(): Promise<void> {
  const me = await client.GET('/api/v1/me/');
  const email: string = me.email;
  const team = await client.POST('/api/v1/teams/', { body: { name: 'Acme' } });
  const teamId: string = team.id;
  const invitation = await client.POST('/api/v1/teams/{team_id}/invitations/', {
    params: { path: { team_id: teamId } },
    body: { email, role: 'member' },
  });
  const status: 'pending' | 'expired' | 'accepted' | 'revoked' | 'replaced' = invitation.status;
  const removed: undefined = await client.DELETE('/api/v1/teams/{id}/members/{user_id}/', {
    params: { path: { id: teamId, user_id: 2 } },
  });
  for await (const member of client.paginate('/api/v1/teams/{id}/members/', { params: { path: { id: teamId } } })) {
    const typed: Member = member;
    void typed;
  }
  void [status, removed];
}

export async function illTyped(): Promise<void> {
  // @ts-expect-error a path the API does not have
  await client.GET('/api/v1/nope/');
  // @ts-expect-error a missing required field: creating a team needs a name
  await client.POST('/api/v1/teams/', { body: { slug: 'acme' } });
  // @ts-expect-error a wrong field type: the name is a string
  await client.POST('/api/v1/teams/', { body: { name: 42 } });
  // @ts-expect-error a missing required path parameter
  await client.GET('/api/v1/teams/{id}/', {});
  await client.POST('/api/v1/teams/{team_id}/invitations/', {
    params: { path: { team_id: 't' } },
    // @ts-expect-error an invitation's role is admin or member, never owner
    body: { email: 'a@example.com', role: 'owner' },
  });
  // @ts-expect-error paginate takes list paths only
  client.paginate('/api/v1/me/');
}
