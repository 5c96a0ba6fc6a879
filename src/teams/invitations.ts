// Team invitations: create (replacing a pending one for the same address), list, revoke, accept.
// Each write is one transaction carrying its side effects (event row, queued e-mail), so a failure
// leaves no half-sent invitation and a success never loses its e-mail or event.
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { AppContext } from '../app-context.ts';
import type { Actor } from '../audit/actor.ts';
import { recordAudit } from '../audit/record.ts';
import type { Database, Executor, Row } from '../db/schema.ts';
import { ConflictError, ForbiddenError, GoneError, NotFoundError } from '../util/domain-errors.ts';
import { isoAfter, nowIso } from '../util/time.ts';
import { queueMail } from '../mail/outbox.ts';
import { lockTeam } from './db-errors.ts';
import { invitationMail } from './invitation-mail.ts';
import { acceptUrl, hashInvitationToken, isWellFormedInvitationToken, newInvitationToken } from './invitation-token.ts';
import { joinTeam, type Role } from './teams.ts';

export type InvitableRole = 'admin' | 'member';

export interface InvitationView {
  id: string;
  email: string;
  role: InvitableRole;
  /** `expired` is a pending invitation whose link has run out. */
  status: 'pending' | 'expired' | 'accepted' | 'revoked' | 'replaced';
  invited_by: number | null;
  created_at: string;
  expires_at: string;
}

type InvitationRow = Pick<
  Row<'invitations'>,
  'id' | 'email' | 'role' | 'status' | 'invited_by' | 'created_at' | 'expires_at'
>;

export function invitationView(row: InvitationRow, now = nowIso()): InvitationView {
  const expired = row.status === 'pending' && row.expires_at <= now;
  return {
    id: row.id,
    email: row.email,
    role: row.role,
    status: expired ? 'expired' : row.status,
    invited_by: row.invited_by,
    created_at: row.created_at,
    expires_at: row.expires_at,
  };
}

export interface NewInvitation {
  team: { id: string; name: string };
  inviter: { id: number; email: string; display_name: string; first_name: string; last_name: string };
  /** Already normalised and validated by the caller. */
  email: string;
  role: InvitableRole;
  message: string | null;
}

const nameOf = (user: NewInvitation['inviter']) =>
  user.display_name || [user.first_name, user.last_name].filter(Boolean).join(' ') || user.email;

/**
 * Creates an invitation and returns it. An address that already belongs to a member → ConflictError.
 * A pending invitation for the same address is marked `replaced` in the same transaction, so its link
 * stops working; the team's row lock (and the partial unique index behind it) keeps two concurrent
 * invitations from both staying live.
 */
export async function createInvitation(ctx: AppContext, input: NewInvitation, actor: Actor): Promise<InvitationView> {
  return ctx.db.kysely.transaction().execute(async (trx) => {
    await lockTeam(trx, input.team.id);
    const member = await trx
      .selectFrom('memberships as m')
      .innerJoin('users as u', 'u.id', 'm.user_id')
      .select('m.id')
      .where('m.team_id', '=', input.team.id)
      .where('u.email', '=', input.email)
      .executeTakeFirst();
    if (member) throw new ConflictError(`${input.email} is already a member of this team.`);
    const now = nowIso();
    const replaced = await trx
      .updateTable('invitations')
      .set({ status: 'replaced', closed_at: now })
      .where('team_id', '=', input.team.id)
      .where('email', '=', input.email)
      .where('status', '=', 'pending')
      .returning('id')
      .executeTakeFirst();
    const token = newInvitationToken();
    const row = {
      id: randomUUID(),
      team_id: input.team.id,
      email: input.email,
      role: input.role,
      message: input.message,
      token_hash: hashInvitationToken(token),
      status: 'pending' as const,
      invited_by: input.inviter.id,
      accepted_by: null,
      created_at: now,
      expires_at: isoAfter(ctx.config.invitationTtlSeconds, Date.parse(now)),
      closed_at: null,
    };
    await trx.insertInto('invitations').values(row).execute();
    const data = { email: row.email, role: row.role, expires_at: row.expires_at, replaced: replaced?.id ?? null };
    await recordAudit(trx, actor, { teamId: input.team.id, action: 'team.invitation.created', targetId: row.id, data });
    await ctx.events.emit(trx, {
      type: 'team.invitation.created',
      teamId: input.team.id,
      data: {
        invitation_id: row.id,
        email: row.email,
        role: row.role,
        invited_by: row.invited_by,
        expires_at: row.expires_at,
      },
    });
    const mail = invitationMail({
      teamName: input.team.name,
      inviterName: nameOf(input.inviter),
      role: input.role,
      message: input.message,
      link: acceptUrl(ctx.config.baseUrl, token),
      expiresAt: row.expires_at,
    });
    await queueMail(ctx, trx, { to: row.email, ...mail });
    return invitationView(row, now);
  });
}

/** A team's open invitations (pending, including expired ones not yet replaced), newest first. */
export async function listInvitations(db: Kysely<Database>, teamId: string, limit: number, offset: number) {
  const base = db.selectFrom('invitations').where('team_id', '=', teamId).where('status', '=', 'pending');
  const [{ count }, rows] = await Promise.all([
    base.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow(),
    base
      .select(['id', 'email', 'role', 'status', 'invited_by', 'created_at', 'expires_at'])
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .offset(offset)
      .execute(),
  ]);
  const now = nowIso();
  return { count: Number(count), rows: rows.map((row) => invitationView(row, now)) };
}

/** Revokes a pending invitation of the team; anything else (unknown, another team's, closed) → NotFoundError. */
export async function revokeInvitation(
  db: Kysely<Database>,
  teamId: string,
  invitationId: string,
  actor: Actor,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const revoked = await trx
      .updateTable('invitations')
      .set({ status: 'revoked', closed_at: nowIso() })
      .where('id', '=', invitationId)
      .where('team_id', '=', teamId)
      .where('status', '=', 'pending')
      .returning(['email', 'role'])
      .executeTakeFirst();
    if (!revoked) throw new NotFoundError('No pending invitation has that id.');
    await recordAudit(trx, actor, {
      teamId,
      action: 'team.invitation.revoked',
      targetId: invitationId,
      data: { email: revoked.email, role: revoked.role },
    });
  });
}

export interface InvitationPreview {
  id: string;
  email: string;
  role: InvitableRole;
  team: { id: string; name: string; slug: string };
  expires_at: string;
}

const INVALID_LINK = 'This invitation link is not valid.';

/**
 * What a token points at, if it can still be accepted; otherwise NotFoundError (unknown token or
 * inactive team) or GoneError (used, revoked, replaced or expired) saying why.
 */
export async function openInvitation(db: Executor, token: string): Promise<InvitationPreview> {
  if (!isWellFormedInvitationToken(token)) throw new NotFoundError(INVALID_LINK);
  const row = await db
    .selectFrom('invitations as i')
    .innerJoin('teams as t', 't.id', 'i.team_id')
    .select([
      'i.id',
      'i.email',
      'i.role',
      'i.status',
      'i.expires_at',
      't.id as team_id',
      't.name as team_name',
      't.slug as team_slug',
      't.is_active',
    ])
    .where('i.token_hash', '=', hashInvitationToken(token))
    .executeTakeFirst();
  if (!row || row.is_active !== 1) throw new NotFoundError(INVALID_LINK);
  if (row.status === 'accepted') throw new GoneError('This invitation has already been used.');
  if (row.status === 'revoked') throw new GoneError('This invitation was revoked by the team.');
  if (row.status === 'replaced')
    throw new GoneError('This invitation was replaced by a newer one; use the link in the latest e-mail.');
  if (row.expires_at <= nowIso()) throw new GoneError('This invitation has expired; ask the team for a new one.');
  return {
    id: row.id,
    email: row.email,
    role: row.role,
    team: { id: row.team_id, name: row.team_name, slug: row.team_slug },
    expires_at: row.expires_at,
  };
}

/**
 * Accepts an invitation for a user: their verified e-mail must be the invited address. Single use
 * even under concurrency (the pending → accepted update is conditional), and the membership insert
 * relies on the unique (team, user) constraint. Emits `team.member.added` in the same transaction.
 */
export async function acceptInvitation(
  ctx: AppContext,
  token: string,
  userId: number,
  actor: Actor,
): Promise<{ team: InvitationPreview['team']; role: Role }> {
  return ctx.db.kysely.transaction().execute(async (trx) => {
    const invitation = await openInvitation(trx, token);
    const user = await trx
      .selectFrom('users')
      .select(['id', 'email', 'email_verified_at'])
      .where('id', '=', userId)
      .executeTakeFirstOrThrow();
    if (user.email !== invitation.email) {
      throw new ForbiddenError(
        'This invitation was sent to a different e-mail address; sign in with that address to accept it.',
      );
    }
    if (!user.email_verified_at)
      throw new ForbiddenError('Verify your e-mail address before accepting the invitation.');
    const claimed = await trx
      .updateTable('invitations')
      .set({ status: 'accepted', accepted_by: user.id, closed_at: nowIso() })
      .where('id', '=', invitation.id)
      .where('status', '=', 'pending')
      .executeTakeFirst();
    if (Number(claimed.numUpdatedRows) === 0) throw new GoneError('This invitation has already been used.');
    const data = { email: invitation.email, role: invitation.role, user_id: user.id };
    await recordAudit(trx, actor, {
      teamId: invitation.team.id,
      action: 'team.invitation.accepted',
      targetId: invitation.id,
      data,
    });
    if (!(await joinTeam(ctx, trx, invitation.team.id, user, invitation.role, actor)))
      throw new ConflictError('You are already a member of this team.');
    return { team: invitation.team, role: invitation.role };
  });
}
