// What the audit tests share: each door's credential (a PAT, an OAuth access token minted by the
// app's own authorization server, a logged-in page session, the operator CLI), the actor an entry
// must then name, and a reader of a team's new entries through the audit-log API itself.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import os from 'node:os';
import { SESSION_COOKIE } from '../../src/accounts/sessions.ts';
import { createPat } from '../../src/tokens/pats.ts';
import { PageClient } from '../accounts/page-client.ts';
import { cli } from '../cli/cli-helpers.ts';
import { TEST_PASSWORD, bearer, type TestApp } from '../support/app.ts';

export const REQUEST_ID = 'audit-test-request';
export const USER_AGENT = 'audit-test/1.0';

export interface Door {
  name: 'pat' | 'oauth';
  headers: Record<string, string>;
  credential: { type: string; id: string };
}

export interface Person {
  id: number;
  email: string;
}

const SCOPES = ['read:teams', 'write:teams', 'write:webhooks'];

/** A PAT of the user, and the credential an entry made with it names. */
export async function patDoor(t: TestApp, user: Person): Promise<Door> {
  const { id, token } = await createPat(t.ctx.db.kysely, {
    userId: user.id,
    name: 'audit',
    scopes: SCOPES,
    expiresAt: null,
  });
  return {
    name: 'pat',
    headers: { ...bearer(token), 'x-request-id': REQUEST_ID, 'user-agent': USER_AGENT },
    credential: { type: 'pat', id: String(id) },
  };
}

/** An OAuth access token of the built-in svc-cli client for the user, issued by the app's provider. */
export async function oauthDoor(t: TestApp, user: Person): Promise<Door> {
  const { provider, resource } = await t.ctx.oauth.get();
  const client = await provider.Client.find('svc-cli');
  const scope = SCOPES.join(' ');
  const grantId = `grant-${user.id}`;
  const token = await new provider.AccessToken({
    accountId: String(user.id),
    client: client!,
    grantId,
    scope,
    resourceServer: { audience: resource, scope, accessTokenFormat: 'opaque', accessTokenTTL: 3600 },
  } as never).save();
  return {
    name: 'oauth',
    headers: { ...bearer(token), 'x-request-id': REQUEST_ID, 'user-agent': USER_AGENT },
    credential: { type: 'oauth', id: `svc-cli:${grantId}` },
  };
}

/** A browser logged in as the user, and the credential its session names (a prefix of the cookie's hash). */
export async function pageDoor(
  t: TestApp,
  user: Person,
): Promise<{ browser: PageClient; credential: { type: string; id: string } }> {
  const browser = new PageClient(t);
  await browser.login(user.email, TEST_PASSWORD);
  const cookie = browser.jar.get(SESSION_COOKIE)!.value;
  return {
    browser,
    credential: { type: 'session', id: createHash('sha256').update(cookie).digest('hex').slice(0, 16) },
  };
}

/** `svc …` on the test app's database; fails the test unless it exits 0. */
export async function svc(t: TestApp, ...argv: string[]): Promise<string> {
  const result = await cli(t.env, argv);
  assert.equal(result.code, 0, result.stderr);
  return result.stdout;
}

/** The actor, credential and context an API request through `door` by `user` is recorded with. */
export function apiActor(user: Person, door: Door) {
  return {
    actor: { type: 'user', id: user.id, email: user.email },
    credential: door.credential,
    context: { ip: '127.0.0.1', user_agent: USER_AGENT, request_id: REQUEST_ID },
  };
}

export function cliActorOf(command: string) {
  return {
    actor: { type: 'system', id: null, email: null },
    credential: { type: 'cli', id: os.userInfo().username },
    context: { ip: null, user_agent: `svc ${command}`, request_id: null },
  };
}

export interface Entry {
  id: number;
  occurred_at: string;
  action: string;
  actor: unknown;
  credential: unknown;
  target: { type: string; id: string };
  context: unknown;
  data: Record<string, unknown>;
}

/**
 * Reads a team's audit log through the API (as `reader`, an owner or admin) and returns the
 * entries it has not returned before for that team, oldest first.
 */
export function auditReader(t: TestApp) {
  const seen = new Set<number>();
  return async (teamId: string, reader: { token: string }): Promise<Entry[]> => {
    const res = await t.inject({
      url: `/api/v1/teams/${teamId}/audit-log/?page_size=200`,
      headers: bearer(reader.token),
    });
    assert.equal(res.statusCode, 200, res.body);
    const fresh = (res.json().results as Entry[]).filter((entry) => !seen.has(entry.id)).reverse();
    for (const entry of fresh) seen.add(entry.id);
    return fresh;
  };
}

/** The entry without the fields that differ on every run (id, time). */
export const shape = ({ id: _id, occurred_at: _at, ...rest }: Entry) => rest;
