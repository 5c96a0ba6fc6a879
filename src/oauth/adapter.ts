// oidc-provider's storage adapter over Kysely: every model (Client, Grant, AccessToken, RefreshToken,
// AuthorizationCode, DeviceCode, Session, Interaction, …) in one table, oauth_models, keyed by
// (model, id), with the secondary lookups the library makes as indexed columns (grant_id for
// revokeByGrantId, user_code for the device flow, uid for sessions) and expiry/consumption as columns.
// Runs unchanged on SQLite and PostgreSQL (ON CONFLICT upsert on both).
import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import { errors, type Adapter, type AdapterPayload } from 'oidc-provider';
import { purgeOlderThan } from '../db/batched-delete.ts';
import type { Database } from '../db/schema.ts';
import { hashClientSecret } from './keys.ts';

const toIso = (epochSeconds: number) => new Date(epochSeconds * 1000).toISOString();

// Single-use artefacts: a second consumption (two requests racing with one code) must fail, the
// library only checks `consumed` after reading, so the adapter makes the UPDATE conditional.
const SINGLE_USE = new Set(['AuthorizationCode', 'DeviceCode', 'RefreshToken']);

// Bearer artefacts the library only ever looks up by their own value: stored under a SHA-256 of it,
// without the value in the payload, so a copy of the table holds no usable access token, refresh
// token or code. (Device codes, sessions and interactions are also found by user code or uid, and
// the library then needs their value back; they stay as they are: short-lived, or bound to a cookie.)
const DIGESTED = new Set(['AccessToken', 'RefreshToken', 'AuthorizationCode']);

/** The `id` column of a model's artefact: its digest for the models above, else the value itself. */
export function storageId(model: string, id: string): string {
  return DIGESTED.has(model) ? createHash('sha256').update(id).digest('base64url') : id;
}

export class KyselyAdapter implements Adapter {
  readonly #db: Kysely<Database>;
  readonly #model: string;
  readonly #digested: boolean;

  constructor(db: Kysely<Database>, model: string) {
    this.#db = db;
    this.#model = model;
    this.#digested = DIGESTED.has(model);
  }

  #id(id: string): string {
    return this.#digested ? storageId(this.#model, id) : id;
  }

  async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
    const { consumed, ...rest } = payload;
    const stored: AdapterPayload = { ...rest };
    if (this.#digested) delete stored.jti;
    // Client secrets are kept as digests (docs/oauth.md); provider.ts compares presented secrets by digest.
    if (
      this.#model === 'Client' &&
      typeof stored.client_secret === 'string' &&
      !stored.client_secret.startsWith('sha256:')
    ) {
      stored.client_secret = hashClientSecret(stored.client_secret);
    }
    const row = {
      payload: JSON.stringify(stored),
      grant_id: typeof payload.grantId === 'string' ? payload.grantId : null,
      user_code: typeof payload.userCode === 'string' ? payload.userCode : null,
      uid: typeof payload.uid === 'string' ? payload.uid : null,
      expires_at: expiresIn ? new Date(Date.now() + expiresIn * 1000).toISOString() : null,
    };
    const consumedAt = typeof consumed === 'number' ? toIso(consumed) : null;
    await this.#db
      .insertInto('oauth_models')
      .values({ model: this.#model, id: this.#id(id), ...row, consumed_at: consumedAt })
      .onConflict((oc) => oc.columns(['model', 'id']).doUpdateSet(row))
      .execute();
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    const payload = await this.#findBy('id', this.#id(id));
    if (payload && this.#digested) payload.jti = id;
    return payload;
  }

  async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    return this.#findBy('user_code', userCode);
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    return this.#findBy('uid', uid);
  }

  async consume(id: string): Promise<void> {
    const result = await this.#db
      .updateTable('oauth_models')
      .set({ consumed_at: new Date().toISOString() })
      .where('model', '=', this.#model)
      .where('id', '=', this.#id(id))
      .where('consumed_at', 'is', null)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0 && SINGLE_USE.has(this.#model)) {
      throw new errors.InvalidGrant('grant already used');
    }
  }

  async destroy(id: string): Promise<void> {
    await this.#db.deleteFrom('oauth_models').where('model', '=', this.#model).where('id', '=', this.#id(id)).execute();
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    await this.#db
      .deleteFrom('oauth_models')
      .where('model', '=', this.#model)
      .where('grant_id', '=', grantId)
      .execute();
  }

  async #findBy(column: 'id' | 'user_code' | 'uid', value: string): Promise<AdapterPayload | undefined> {
    if (typeof value !== 'string' || value.length === 0 || value.length > 512) return undefined;
    const row = await this.#db
      .selectFrom('oauth_models')
      .select(['payload', 'consumed_at'])
      .where('model', '=', this.#model)
      .where(column, '=', value)
      .executeTakeFirst();
    if (!row) return undefined;
    const payload = JSON.parse(row.payload) as AdapterPayload;
    // The library reads `consumed` as a truthy marker (epoch seconds in its own adapters).
    if (row.consumed_at) payload.consumed = Math.floor(Date.parse(row.consumed_at) / 1000);
    return payload;
  }
}

/** The adapter constructor oidc-provider instantiates once per model name. */
export function kyselyAdapterFor(db: Kysely<Database>) {
  return class extends KyselyAdapter {
    constructor(model: string) {
      super(db, model);
    }
  };
}

/**
 * Deletes rows that expired more than a day ago (the day keeps "expired" answers specific). The
 * models go in batches along oauth_models_expires_idx (db/batched-delete.ts); device polling state
 * and wrong-code records live minutes, and their tables stay small.
 */
export async function deleteExpiredOAuthRows(db: Kysely<Database>, now = Date.now()): Promise<number> {
  const cutoff = new Date(now - 86_400_000).toISOString();
  const models = await purgeOlderThan(db, 'oauth_models', 'expires_at', cutoff, { key: ['model', 'id'] });
  await db.deleteFrom('oauth_device_polls').where('expires_at', '<', cutoff).execute();
  await db.deleteFrom('oauth_user_code_failures').where('created_at', '<', cutoff).execute();
  return models;
}
