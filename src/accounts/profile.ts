// Profile name changes from the profile page. A real change emits `user.profile.updated` to every
// active team of the user in the same transaction (as PATCH /api/v1/me/ does); a no-op emits nothing.
import type { AppContext } from '../app-context.ts';
import { containsLink, hasControlCharacters } from '../util/links.ts';
import { nowIso } from '../util/time.ts';

export const PROFILE_FIELDS = ['first_name', 'last_name', 'display_name'] as const;
export type ProfileField = (typeof PROFILE_FIELDS)[number];
export const PROFILE_NAME_MAX_LENGTH = 150;

const LABELS: Record<ProfileField, string> = {
  first_name: 'First name',
  last_name: 'Last name',
  display_name: 'Display name',
};

/** The first problem with the submitted names, or null. */
export function profileProblem(values: Record<ProfileField, string>): string | null {
  for (const field of PROFILE_FIELDS) {
    const value = values[field];
    if (value.length > PROFILE_NAME_MAX_LENGTH)
      return `${LABELS[field]} must be at most ${PROFILE_NAME_MAX_LENGTH} characters.`;
    if (hasControlCharacters(value)) return `${LABELS[field]} must not contain control characters.`;
    if (containsLink(value)) return `${LABELS[field]} cannot contain links.`;
  }
  return null;
}

/**
 * Saves the names given (a field left out keeps its stored value, so two concurrent updates of
 * different fields both stick); returns the fields that actually changed.
 */
export async function updateProfileNames(
  ctx: AppContext,
  userId: number,
  values: Partial<Record<ProfileField, string>>,
): Promise<ProfileField[]> {
  return ctx.db.kysely.transaction().execute(async (trx) => {
    const current = await trx
      .selectFrom('users')
      .select(PROFILE_FIELDS)
      .where('id', '=', userId)
      .executeTakeFirstOrThrow();
    const changed = PROFILE_FIELDS.filter((field) => values[field] !== undefined && values[field] !== current[field]);
    if (changed.length === 0) return changed;
    const updatedAt = nowIso();
    await trx
      .updateTable('users')
      .set({ ...Object.fromEntries(changed.map((field) => [field, values[field]])), updated_at: updatedAt })
      .where('id', '=', userId)
      .execute();
    await ctx.events.emit(trx, {
      type: 'user.profile.updated',
      userId,
      data: { user_id: userId, changed_fields: changed, updated_at: updatedAt },
    });
    return changed;
  });
}
