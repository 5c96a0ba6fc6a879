// Webhook subscriptions: the team's endpoints, their event filters and their signing secrets.
// Other folders call these functions, never the tables.
import { randomBytes, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { AppContext } from '../app-context.ts';
import type { Actor } from '../audit/actor.ts';
import { changedFields, recordAudit } from '../audit/record.ts';
import { EVENT_CATALOG_PATH, isEventType } from '../events/index.ts';
import type { Database, Executor, Row } from '../db/schema.ts';
import { ConflictError, ValidationError } from '../util/domain-errors.ts';
import { encryptSecret } from '../util/encryption.ts';
import { isoAfter, nowIso } from '../util/time.ts';
import { type AddressGuard, SsrfRefusal, parseWebhookUrl } from './ssrf.ts';

/** A rule about one field, refused with the sentence for `detail` and for the field. */
const invalidField = (field: string, message: string) => new ValidationError(message, [{ field, message }]);

/** A subscription as stored (the table has no generated columns: a row reads back as it is written). */
export type SubscriptionRow = Row<'webhook_subscriptions'>;

export interface SubscriptionView {
  id: string;
  team_id: string;
  url: string;
  events: string[];
  is_active: boolean;
  standard_webhooks: boolean;
  disabled_at: string | null;
  disabled_reason: string | null;
  created_at: string;
  updated_at: string;
}

export function subscriptionView(row: SubscriptionRow): SubscriptionView {
  return {
    id: row.id,
    team_id: row.team_id,
    url: row.url,
    events: JSON.parse(row.events) as string[],
    is_active: row.is_active === 1,
    standard_webhooks: row.standard_webhooks === 1,
    disabled_at: row.disabled_at,
    disabled_reason: row.disabled_reason,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/**
 * 32 random bytes, base64: the secret as the create/rotate response shows it. X-Service-Signature is
 * keyed with its characters, the Standard Webhooks signature with the 32 bytes it encodes.
 */
export function newSecret(): string {
  return randomBytes(32).toString('base64');
}

/** What a subscription's secret is encrypted for (AES-GCM additional data): it decrypts for no other row. */
export const secretContext = (subscriptionId: string) => `webhook:${subscriptionId}`;

/** A non-empty list of registered names, or ["*"] (a list mixing "*" with names becomes ["*"]); a refusal names the catalog. */
export function normaliseEvents(events: readonly string[], baseUrl: string): string[] {
  if (events.length === 0) throw invalidField('events', 'events must name at least one event type, or be ["*"].');
  if (events.includes('*')) return ['*'];
  const unknown = [...new Set(events.filter((name) => !isEventType(name)))];
  if (unknown.length > 0) {
    throw invalidField(
      'events',
      `Unknown event type${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}. The event types are listed at ${baseUrl}${EVENT_CATALOG_PATH}.`,
    );
  }
  return [...new Set(events)];
}

/** Checks the URL rules and the SSRF guard (the host is resolved now); returns the URL as stored. */
export async function checkedUrl(guard: AddressGuard, value: string): Promise<string> {
  try {
    const url = parseWebhookUrl(value);
    await guard.addressesFor(url.hostname);
    return url.toString();
  } catch (error) {
    if (error instanceof SsrfRefusal) throw invalidField('url', `url is refused: ${error.message}`);
    throw error;
  }
}

export async function findSubscription(db: Executor, teamId: string, id: string): Promise<SubscriptionRow | undefined> {
  return db
    .selectFrom('webhook_subscriptions')
    .selectAll()
    .where('id', '=', id.toLowerCase())
    .where('team_id', '=', teamId)
    .executeTakeFirst();
}

export async function listSubscriptions(db: Executor, teamId: string, limit: number, offset: number) {
  const base = db.selectFrom('webhook_subscriptions').where('team_id', '=', teamId);
  const [{ count }, rows] = await Promise.all([
    base.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow(),
    base.selectAll().orderBy('created_at').orderBy('id').limit(limit).offset(offset).execute(),
  ]);
  return { count: Number(count), rows };
}

export async function createSubscription(
  ctx: Pick<AppContext, 'config' | 'db'>,
  guard: AddressGuard,
  teamId: string,
  input: { url: string; events: string[]; standard_webhooks?: boolean },
  actor: Actor,
): Promise<{ row: SubscriptionRow; secret: string }> {
  const events = normaliseEvents(input.events, ctx.config.baseUrl);
  const url = await checkedUrl(guard, input.url);
  const secretKey = ctx.config.secretKey!;
  return ctx.db.kysely.transaction().execute(async (trx) => {
    // Serialises concurrent creations for one team so the cap holds (SQLite serialises anyway).
    if (ctx.db.dialect === 'postgres')
      await trx.selectFrom('teams').select('id').where('id', '=', teamId).forUpdate().execute();
    const { count } = await trx
      .selectFrom('webhook_subscriptions')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('team_id', '=', teamId)
      .executeTakeFirstOrThrow();
    const cap = ctx.config.webhooks.maxSubscriptionsPerTeam;
    if (Number(count) >= cap) throw new ConflictError(`A team can have at most ${cap} webhook subscriptions.`);
    const id = randomUUID();
    const secret = newSecret();
    const now = nowIso();
    const row: SubscriptionRow = {
      id,
      team_id: teamId,
      url,
      events: JSON.stringify(events),
      secret_encrypted: encryptSecret(secretKey, secret, secretContext(id)),
      previous_secret_encrypted: null,
      previous_secret_expires_at: null,
      is_active: 1,
      standard_webhooks: input.standard_webhooks === false ? 0 : 1,
      consecutive_failures: 0,
      disabled_at: null,
      disabled_reason: null,
      created_at: now,
      updated_at: now,
    };
    await trx.insertInto('webhook_subscriptions').values(row).execute();
    await recordAudit(trx, actor, {
      teamId,
      action: 'webhook.subscription.created',
      targetId: id,
      data: { url, events },
    });
    return { row, secret };
  });
}

export async function updateSubscription(
  db: Kysely<Database>,
  guard: AddressGuard,
  row: SubscriptionRow,
  patch: { url?: string; events?: string[]; is_active?: boolean; standard_webhooks?: boolean },
  baseUrl: string,
  actor: Actor,
): Promise<SubscriptionRow> {
  const changes: Partial<SubscriptionRow> = {};
  if (patch.events !== undefined) changes.events = JSON.stringify(normaliseEvents(patch.events, baseUrl));
  if (patch.url !== undefined) changes.url = await checkedUrl(guard, patch.url);
  if (patch.is_active !== undefined) {
    changes.is_active = patch.is_active ? 1 : 0;
    if (patch.is_active) {
      // Re-enabling clears the auto-disable record and starts counting failures afresh.
      changes.consecutive_failures = 0;
      changes.disabled_at = null;
      changes.disabled_reason = null;
    }
  }
  if (patch.standard_webhooks !== undefined) changes.standard_webhooks = patch.standard_webhooks ? 1 : 0;
  if (Object.keys(changes).length === 0) return row;
  changes.updated_at = nowIso();
  const before = {
    url: row.url,
    events: JSON.parse(row.events) as string[],
    is_active: row.is_active === 1,
    standard_webhooks: row.standard_webhooks === 1,
  };
  const after = {
    url: changes.url,
    events: changes.events === undefined ? undefined : (JSON.parse(changes.events) as string[]),
    is_active: patch.is_active,
    standard_webhooks: patch.standard_webhooks,
  };
  await db.transaction().execute(async (trx) => {
    await trx.updateTable('webhook_subscriptions').set(changes).where('id', '=', row.id).execute();
    const changed = changedFields(before, after);
    if (Object.keys(changed).length > 0)
      await recordAudit(trx, actor, {
        teamId: row.team_id,
        action: 'webhook.subscription.updated',
        targetId: row.id,
        data: changed,
      });
  });
  return { ...row, ...changes };
}

export async function deleteSubscription(db: Kysely<Database>, row: SubscriptionRow, actor: Actor): Promise<void> {
  // Its delivery rows (pending ones included) go with it: nothing more is sent. They are deleted
  // before the subscription, the order in which a worker writing a result locks them, so the two
  // cannot deadlock on PostgreSQL (the cascade alone would lock the subscription first).
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom('webhook_deliveries').where('subscription_id', '=', row.id).execute();
    await trx.deleteFrom('webhook_subscriptions').where('id', '=', row.id).execute();
    await recordAudit(trx, actor, {
      teamId: row.team_id,
      action: 'webhook.subscription.deleted',
      targetId: row.id,
      data: { url: row.url, events: JSON.parse(row.events) },
    });
  });
}

/** A new secret; the old one keeps signing (as a second v1) for SERVICE_WEBHOOKS_SECRET_OVERLAP_HOURS. */
export async function rotateSecret(
  ctx: Pick<AppContext, 'config' | 'db'>,
  row: SubscriptionRow,
  actor: Actor,
): Promise<{ row: SubscriptionRow; secret: string }> {
  const secretKey = ctx.config.secretKey!;
  const secret = newSecret();
  const overlap = ctx.config.webhooks.secretOverlapHours;
  const changes = {
    secret_encrypted: encryptSecret(secretKey, secret, secretContext(row.id)),
    previous_secret_encrypted: overlap > 0 ? row.secret_encrypted : null,
    previous_secret_expires_at: overlap > 0 ? isoAfter(overlap * 3600) : null,
    updated_at: nowIso(),
  };
  await ctx.db.kysely.transaction().execute(async (trx) => {
    await trx.updateTable('webhook_subscriptions').set(changes).where('id', '=', row.id).execute();
    const data = { previous_secret_expires_at: changes.previous_secret_expires_at };
    await recordAudit(trx, actor, { teamId: row.team_id, action: 'webhook.secret_rotated', targetId: row.id, data });
  });
  return { row: { ...row, ...changes }, secret };
}
