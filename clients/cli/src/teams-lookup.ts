// Commands take a team as its UUID or its slug (what a person remembers); a slug is looked up in the
// caller's teams. Members likewise as a user id or an e-mail address.
import type { SvcClient } from 'svc-client';
import { CliFailure } from './failures.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function teamId(client: SvcClient, ref: string): Promise<string> {
  if (UUID.test(ref)) return ref;
  for await (const team of client.paginate('/api/v1/teams/')) if (team.slug === ref) return team.id;
  throw new CliFailure(1, `no team "${ref}" among yours (give its id or slug; \`svc-cli teams list\` shows them)`);
}

/** The member list by cursor, 200 to a page: any number of members (its page-number pages stop at 10,000). */
export const BY_CURSOR: Record<string, string> = { page_size: '200' };

export async function memberId(client: SvcClient, team: string, ref: string): Promise<number> {
  if (/^\d+$/.test(ref)) return Number(ref);
  const email = ref.toLowerCase();
  for await (const member of client.paginate('/api/v1/teams/{id}/members/', {
    params: { path: { id: team }, query: BY_CURSOR },
  })) {
    if (member.email.toLowerCase() === email) return member.id;
  }
  throw new CliFailure(1, `no member "${ref}" in this team (give a user id or an e-mail address)`);
}
