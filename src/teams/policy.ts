// Who may do what inside a team. Each function returns null when the action is allowed, or the
// sentence a 403 carries to say why not. Pure: callers load the roles, this decides.
import type { Role } from './teams.ts';

const article = (role: Role) => (role === 'owner' ? 'an owner' : role === 'admin' ? 'an admin' : 'a member');

export function refuseTeamUpdate(actor: Role): string | null {
  return actor === 'member' ? 'Only owners and admins can change team settings; you are a member.' : null;
}

export function refuseInvitationAccess(actor: Role): string | null {
  return actor === 'member' ? 'Only owners and admins can see or manage invitations; you are a member.' : null;
}

export function refuseInvite(actor: Role, role: 'admin' | 'member'): string | null {
  const access = refuseInvitationAccess(actor);
  if (access) return access.replace('see or manage', 'send');
  if (actor === 'admin' && role !== 'member') return 'Admins can invite members only; ask an owner to invite an admin.';
  return null;
}

/** Owners change anyone's role; admins manage members only and cannot hand out admin or owner. */
export function refuseRoleChange(actor: Role, target: Role, newRole: Role): string | null {
  if (actor === 'owner') return null;
  if (actor === 'member') return 'Only owners and admins can change roles; you are a member.';
  if (target !== 'member') return `Admins can manage members only; this user is ${article(target)}.`;
  if (newRole !== 'member') return `Admins cannot grant the ${newRole} role; ask an owner.`;
  return null;
}

/** Anyone may leave; owners remove anyone; admins remove members only; members remove nobody else. */
export function refuseRemoval(actor: Role, target: Role, isSelf: boolean): string | null {
  if (isSelf || actor === 'owner') return null;
  if (actor === 'member') return 'Members can only remove themselves; ask an owner or admin.';
  if (target !== 'member') return `Admins can remove members only; this user is ${article(target)}.`;
  return null;
}

export const LAST_OWNER = 'A team must keep at least one owner: make another member an owner first.';
