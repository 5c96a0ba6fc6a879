// /teams/<team_id>/audit/: the team's audit log in the dashboard, for owners and admins (a member
// gets the 403 page, anyone else the 404 page, as on the team's other pages). Read-only: newest
// first, a page at a time with the API's cursor pagination, filtered by action and dates. There is
// no form that changes an entry.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { AppContext } from '../app-context.ts';
import type { Database } from '../db/schema.ts';
import { cursorPage } from '../http/cursor.ts';
import { ForbiddenError } from '../util/domain-errors.ts';
import { renderPage } from '../web/render.ts';
import { AUDIT_ACTION_NAMES } from './actions.ts';
import { readAuditFilters, type AuditQuery } from './filters.ts';
import { auditEntriesQuery, auditEntryView, type AuditEntryView } from './store.ts';

/**
 * The viewer's team from the `team_id` path parameter (a 404 problem unless they are a member):
 * the teams capability's page check, handed over by the dashboard so that this folder, which the
 * teams services write through, does not import them back.
 */
export type TeamPageAccess = (
  db: Kysely<Database>,
  request: FastifyRequest,
) => Promise<{ team: { id: string; name: string; role: string }; base: string }>;

const minuteUtc = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;

const CREDENTIALS: Record<string, string> = {
  session: 'browser session',
  pat: 'personal access token',
  oauth: 'OAuth token',
  jwt: 'JWT',
  cli: 'svc CLI',
};

/** Who, in words: the user's e-mail, or the system; and through what. */
function byWhom(entry: AuditEntryView): { who: string; via: string } {
  const who = entry.actor.type === 'user' ? (entry.actor.email ?? `user ${entry.actor.id}`) : 'the system';
  const credential = entry.credential;
  if (!credential) return { who, via: 'the service itself' };
  const kind = CREDENTIALS[credential.type] ?? credential.type;
  return { who, via: credential.id ? `${kind} ${credential.id}` : kind };
}

const shown = (value: unknown): string =>
  value === null || value === undefined
    ? '—'
    : Array.isArray(value)
      ? value.join(', ')
      : typeof value === 'object'
        ? JSON.stringify(value)
        : String(value);

/** One line per field of `data`: "name: Old → New" for a change, "role: admin" for a fact. */
export function detailLines(data: Record<string, unknown>): string[] {
  return Object.entries(data).map(([field, value]) => {
    if (value && typeof value === 'object' && !Array.isArray(value) && 'before' in value && 'after' in value) {
      return `${field}: ${shown(value.before)} → ${shown(value.after)}`;
    }
    return `${field}: ${shown(value)}`;
  });
}

export function registerAuditPage(pages: FastifyInstance, ctx: AppContext, teamPage: TeamPageAccess) {
  pages.get('/teams/:team_id/audit/', async (request, reply) => {
    const access = await teamPage(ctx.db.kysely, request);
    if (access.team.role !== 'owner' && access.team.role !== 'admin') {
      throw new ForbiddenError('Only owners and admins of the team can read its audit log; you are a member.');
    }
    // The filter form sends every field; an empty one is no filter.
    const raw = request.query as Record<string, unknown>;
    const given = (name: keyof AuditQuery) =>
      typeof raw[name] === 'string' && raw[name] !== '' ? (raw[name] as string) : undefined;
    const form = { action: given('action'), actor_id: given('actor_id'), since: given('since'), until: given('until') };
    const query = auditEntriesQuery(ctx.db.kysely, access.team.id, readAuditFilters(form));
    const page = await cursorPage({
      request,
      query,
      baseUrl: ctx.config.baseUrl,
      secret: ctx.config.secretKey!,
      createdAtColumn: 'occurred_at',
    });
    const entries = page.results.map(auditEntryView).map((entry) => ({
      ...entry,
      time: minuteUtc(entry.occurred_at),
      ...byWhom(entry),
      target:
        entry.target.type === 'team' ? 'the team' : `${entry.target.type.replaceAll('_', ' ')} ${entry.target.id}`,
      details: detailLines(entry.data),
    }));
    return renderPage(reply, 'audit/views/audit', {
      title: `Audit log of ${access.team.name}`,
      team: access.team,
      base: access.base,
      path: `${access.base}audit/`,
      actions: AUDIT_ACTION_NAMES,
      form: {
        action: form.action ?? '',
        actor_id: form.actor_id ?? '',
        since: form.since ?? '',
        until: form.until ?? '',
      },
      filtered: Object.values(form).some((value) => value !== undefined),
      entries,
      newerPage: page.previous,
      olderPage: page.next,
    });
  });
}
