// Changing a member's role and removing members, under the role rules of policy.ts and the rule
// that a team always keeps an owner. Each runs in one transaction holding the team's row lock, so
// two owners demoting each other at the same moment cannot leave the team without one.
import type { Kysely, Transaction } from 'kysely';
import type { Actor } from '../audit/actor.ts';
import { recordAudit } from '../audit/record.ts';
import type { Database, Executor } from '../db/schema.ts';
import { lockTeam } from './db-errors.ts';
import { ConflictError, ForbiddenError, NotFoundError } from '../util/domain-errors.ts';
import { LAST_OWNER, refuseRemoval, refuseRoleChange } from './policy.ts';
import type { Role } from './teams.ts';

export interface MemberView {
  id: number;
  email: string;
  first_name: string;
  last_name: string;
  display_name: string;
  role: Role;
  joined_at: string;
}

export async function memberOf(db: Executor, teamId: string, userId: number): Promise<MemberView | undefined> {
  return db
    .selectFrom('memberships as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .select(['u.id', 'u.email', 'u.first_name', 'u.last_name', 'u.display_name', 'm.role', 'm.joined_at'])
    .where('m.team_id', '=', teamId)
    .where('m.user_id', '=', userId)
    .executeTakeFirst();
}

async function ownerCount(trx: Transaction<Database>, teamId: string): Promise<number> {
  const row = await trx
    .selectFrom('memberships')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('team_id', '=', teamId)
    .where('role', '=', 'owner')
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** Loads actor and target under the team lock; an unknown target → NotFoundError. */
async function actorAndTarget(trx: Transaction<Database>, teamId: string, actorId: number, targetId: number) {
  await lockTeam(trx, teamId);
  const actor = await memberOf(trx, teamId, actorId);
  // The caller was a member when the route checked; a concurrent removal makes the team invisible.
  if (!actor) throw new NotFoundError();
  const target = actorId === targetId ? actor : await memberOf(trx, teamId, targetId);
  if (!target) throw new NotFoundError('That user is not a member of this team.');
  return { actor, target };
}

export async function changeRole(
  db: Kysely<Database>,
  teamId: string,
  actorId: number,
  targetId: number,
  role: Role,
  by: Actor,
): Promise<MemberView> {
  return db.transaction().execute(async (trx) => {
    const { actor, target } = await actorAndTarget(trx, teamId, actorId, targetId);
    const refusal = refuseRoleChange(actor.role, target.role, role);
    if (refusal) throw new ForbiddenError(refusal);
    if (target.role === role) return target;
    if (target.role === 'owner' && (await ownerCount(trx, teamId)) <= 1) throw new ConflictError(LAST_OWNER);
    await trx
      .updateTable('memberships')
      .set({ role })
      .where('team_id', '=', teamId)
      .where('user_id', '=', targetId)
      .execute();
    await recordAudit(trx, by, {
      teamId,
      action: 'team.member.role_changed',
      targetId,
      data: { email: target.email, role: { before: target.role, after: role } },
    });
    return { ...target, role };
  });
}

export async function removeMember(
  db: Kysely<Database>,
  teamId: string,
  actorId: number,
  targetId: number,
  by: Actor,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const { actor, target } = await actorAndTarget(trx, teamId, actorId, targetId);
    const refusal = refuseRemoval(actor.role, target.role, actorId === targetId);
    if (refusal) throw new ForbiddenError(refusal);
    if (target.role === 'owner' && (await ownerCount(trx, teamId)) <= 1) throw new ConflictError(LAST_OWNER);
    await trx.deleteFrom('memberships').where('team_id', '=', teamId).where('user_id', '=', targetId).execute();
    const action = actorId === targetId ? 'team.member.left' : 'team.member.removed';
    await recordAudit(trx, by, { teamId, action, targetId, data: { email: target.email, role: target.role } });
  });
}
