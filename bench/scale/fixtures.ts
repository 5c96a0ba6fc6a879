// The measured rows of the scale scenario, the same at every size: the users whose PATs and OAuth
// access tokens call /me, and one caller who belongs to 200 teams, owns one with 10,000 members and
// one whose webhook subscription has a delivery log 1,000 pages deep (and whose audit log is as
// deep: audit.ts). Credentials are made with the
// service's own code (createPat, oidc-provider's AccessToken), the bulk of members and log rows by
// INSERT … SELECT as in seed-rows.ts.
import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { AppContext } from '../../src/app-context.ts';
import type { Database } from '../../src/db/schema.ts';
import { createOAuthServer } from '../../src/oauth/provider.ts';
import { createPat } from '../../src/tokens/pats.ts';
import { encryptSecret } from '../../src/util/encryption.ts';
import type { SeedSql } from './sql.ts';

export const MEASURED_USERS = 64;
export const TEAMS_OF_CALLER = 200;
export const BIG_TEAM_MEMBERS = 10_000;
/** 1,000 pages of 50 and one more page: the cursor's 1,000th page exists. */
export const HOOK_LOG_ROWS = 50_050;
export const PAGE_SIZE = 50;

export interface Fixtures {
  /** One PAT (read:profile) per measured user. */
  pats: string[];
  /** One OAuth access token (read:profile) per measured user, from the built-in svc-cli client. */
  oauth: string[];
  /** The caller's PAT (read:profile, read:teams, read:webhooks). */
  caller: string;
  callerId: number;
  bigTeamId: string;
  hooksTeamId: string;
  subscriptionId: string;
}

const iso = (epochSeconds: number) => new Date(epochSeconds * 1000).toISOString();

async function insertUsers(
  db: Kysely<Database>,
  s: SeedSql,
  prefix: string,
  count: number,
  now: number,
): Promise<void> {
  // Equal-length profiles (four-digit numbers) as in bench/seed.ts: every /me answer has one size.
  await sql
    .raw(
      `insert into users (email, password_hash, first_name, last_name, display_name, email_verified_at, is_active, is_staff, created_at, updated_at)
    select '${prefix}-' || ${s.text('10000 + i')} || '@example.com', '$argon2id$v=19$m=19456,t=2,p=1$unused$unused', 'Bench', 'User' || ${s.text('10000 + i')},
      'Bench User ' || ${s.text('10000 + i')}, '${iso(now)}', 1, 0, '${iso(now)}', '${iso(now)}'
    from ${s.series(count)} as x`,
    )
    .execute(db);
}

async function idOf(db: Kysely<Database>, email: string): Promise<number> {
  return (await db.selectFrom('users').select('id').where('email', '=', email).executeTakeFirstOrThrow()).id;
}

async function newTeam(
  db: Kysely<Database>,
  name: string,
  ownerId: number,
  role: 'owner' | 'member',
  at: string,
): Promise<string> {
  const id = randomUUID();
  await db
    .insertInto('teams')
    .values({ id, name, slug: `bench-${id}`, is_active: 1, created_at: at, updated_at: at })
    .execute();
  await db.insertInto('memberships').values({ team_id: id, user_id: ownerId, role, joined_at: at }).execute();
  return id;
}

async function oauthTokens(ctx: AppContext, userIds: number[]): Promise<string[]> {
  const { provider, resource } = createOAuthServer(ctx);
  const client = await provider.Client.find('svc-cli');
  if (!client) throw new Error('the built-in svc-cli OAuth client is off (SERVICE_OAUTH_CLI_CLIENT_ENABLED)');
  const ttl = ctx.config.oauth.accessTokenTtlSeconds;
  const tokens: string[] = [];
  for (const id of userIds) {
    const token = new provider.AccessToken({
      accountId: String(id),
      client,
      scope: 'read:profile',
      resourceServer: { audience: resource, scope: 'read:profile', accessTokenFormat: 'opaque', accessTokenTTL: ttl },
    } as never);
    tokens.push(await token.save());
  }
  return tokens;
}

export async function seedFixtures(ctx: AppContext, s: SeedSql, now: number): Promise<Fixtures> {
  const db = ctx.db.kysely;
  await insertUsers(db, s, 'bench-user', MEASURED_USERS, now);
  const measured = await db
    .selectFrom('users')
    .select('id')
    .where('email', 'like', 'bench-user-%')
    .orderBy('id')
    .execute();
  const pats: string[] = [];
  for (const { id } of measured)
    pats.push((await createPat(db, { userId: id, name: 'bench', scopes: ['read:profile'], expiresAt: null })).token);
  const oauth = await oauthTokens(
    ctx,
    measured.map((row) => row.id),
  );

  await insertUsers(db, s, 'bench-caller', 1, now);
  const callerId = await idOf(db, 'bench-caller-10001@example.com');
  const caller = (
    await createPat(db, {
      userId: callerId,
      name: 'bench caller',
      scopes: ['read:profile', 'read:teams', 'read:webhooks'],
      expiresAt: null,
    })
  ).token;
  const at = iso(now - 86_400);
  const bigTeamId = await newTeam(db, 'Bench big team', callerId, 'owner', at);
  const hooksTeamId = await newTeam(db, 'Bench hooks team', callerId, 'owner', at);
  for (let i = 2; i < TEAMS_OF_CALLER; i++)
    await newTeam(db, `Bench team ${String(i).padStart(3, '0')}`, callerId, 'member', at);

  // The big team's other members, joined one second apart after the owner.
  await insertUsers(db, s, 'bench-member', BIG_TEAM_MEMBERS - 1, now);
  await sql
    .raw(
      `insert into memberships (team_id, user_id, role, joined_at)
    select '${bigTeamId}', u.id, 'member', ${s.iso(`${now - 86_400} + cast(substr(u.email, 14, 5) as integer) - 10000`)}
    from users u where u.email like 'bench-member-%'`,
    )
    .execute(db);

  const subscriptionId = randomUUID();
  await db
    .insertInto('webhook_subscriptions')
    .values({
      id: subscriptionId,
      team_id: hooksTeamId,
      url: 'https://hooks.example.com/bench',
      events: '["*"]',
      secret_encrypted: encryptSecret(ctx.config.secretKey!, 'bench secret', `webhook:${subscriptionId}`),
      is_active: 1,
      standard_webhooks: 1,
      consecutive_failures: 0,
      created_at: at,
      updated_at: at,
    })
    .execute();
  // One attempt a second over the last HOOK_LOG_ROWS seconds (well within the retention).
  await sql
    .raw(
      `insert into webhook_deliveries (subscription_id, event_id, event_type, payload, attempt, status, status_code, response_body, duration_ms, created_at)
    select '${subscriptionId}', 'evt_bench_' || ${s.text('i')}, 'team.member.added',
      '{"id":"evt_bench_' || ${s.text('i')} || '","type":"team.member.added","api_version":"v1","team_id":"${hooksTeamId}","data":{"user_id":${callerId},"role":"member"}}',
      1, 'success', 200, '{"ok":true}', 9, ${s.iso(`${now} - i`)}
    from ${s.series(HOOK_LOG_ROWS)} as x`,
    )
    .execute(db);
  return { pats, oauth, caller, callerId, bigTeamId, hooksTeamId, subscriptionId };
}
