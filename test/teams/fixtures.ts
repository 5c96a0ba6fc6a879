// Shared setup for the teams tests: a team with one user of each role, plus targets to act on.
import assert from 'node:assert/strict';
import { sendQueuedMail } from '../../src/mail/outbox.ts';
import { bearer, type TestApp } from '../support/app.ts';
import { readMailbox } from '../mail/eml.ts';

export interface Cast {
  owner: { id: number; email: string; token: string };
  admin: { id: number; email: string; token: string };
  member: { id: number; email: string; token: string };
  outsider: { id: number; email: string; token: string };
}

export type Actor = keyof Cast;
export const ACTORS: Actor[] = ['owner', 'admin', 'member', 'outsider'];

/** Four users with full-access tokens (one per role); created once per test file (hashing is slow). */
export async function makeCast(t: TestApp): Promise<Cast> {
  const make = async () => {
    const user = await t.user();
    return { ...user, token: await t.token(user.id, ['read:teams', 'write:teams', 'read:profile', 'write:profile']) };
  };
  return { owner: await make(), admin: await make(), member: await make(), outsider: await make() };
}

/** A fresh team where cast.owner is owner, cast.admin admin and cast.member member (outsider is not in it). */
export async function castTeam(t: TestApp, cast: Cast): Promise<string> {
  const team = await t.team(cast.owner.id);
  await t.member(team.id, cast.admin.id, 'admin');
  await t.member(team.id, cast.member.id, 'member');
  return team.id;
}

export async function roleOf(t: TestApp, teamId: string, userId: number): Promise<string | undefined> {
  const row = await t.ctx.db.kysely
    .selectFrom('memberships')
    .select('role')
    .where('team_id', '=', teamId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return row?.role;
}

export async function events(t: TestApp, type?: string) {
  let query = t.ctx.db.kysely.selectFrom('events').selectAll().orderBy('created_at').orderBy('id');
  if (type) query = query.where('type', '=', type);
  return (await query.execute()).map((row) => ({ ...row, data: JSON.parse(row.data) }));
}

export async function count(
  t: TestApp,
  table: 'invitations' | 'mail_outbox' | 'events' | 'memberships',
): Promise<number> {
  const row = await t.ctx.db.kysely
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export const as = (actor: { token: string }) => bearer(actor.token);

const LINK = /http:\/\/testserver\/invitations\/([A-Za-z0-9_-]{43})\//;

/** Sends queued mail and returns the accept token of the newest message to `email`. */
export async function tokenFromMail(t: TestApp, email: string): Promise<string> {
  await sendQueuedMail(t.ctx);
  const messages = readMailbox(t.env.SERVICE_DATA_DIR).filter((m) => m.headers.get('to')?.includes(email));
  assert.ok(messages.length > 0, `no e-mail to ${email}`);
  const match = LINK.exec(messages.at(-1)!.text);
  assert.ok(match, 'the e-mail carries the accept link');
  return match[1];
}
