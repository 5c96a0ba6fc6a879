// Idempotency-Key (docs/traffic.md), for POST routes that opt in with `config: { idempotent: true }`.
//
// A request carrying a key first reserves it: one INSERT of a row unique per (user, method, path,
// key), committed on its own before the route runs, so that of any number of concurrent requests
// (in any number of processes) exactly one runs the route. The others see the row: a different
// body is 409, a reservation still held is 409 "in progress", a stored response is replayed with
// `Idempotency-Replay: true`. The route's answer is stored when it is 2xx-4xx (status, body,
// Content-Type, Location) for SERVICE_IDEMPOTENCY_TTL_HOURS; a 5xx deletes the reservation, so the
// client may retry. The body fingerprint is the SHA-256 of the raw body bytes, hashed as they
// stream in (preParsing), without keeping a second copy of the body.
//
// Hand-written: the Fastify idempotency plugins available keep state in process memory or Redis
// only, and do not make the reservation atomic with the database the side effects go to.
import { createHash, type Hash } from 'node:crypto';
import { Transform, pipeline, type Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import type { Kysely } from 'kysely';
import { purgeOlderThan } from '../db/batched-delete.ts';
import type { Database, Row } from '../db/schema.ts';
import { ConflictError, ValidationError } from '../util/domain-errors.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route honours the Idempotency-Key header (POST routes; authenticated callers). */
    idempotent?: boolean;
  }
  interface FastifyRequest {
    /** SHA-256 (hex) of the raw body, set while the body streams in when an Idempotency-Key is sent. */
    bodySha256: string | null;
    /** The idempotency row this request reserved and must complete or release. */
    idempotencyReservation: number | null;
  }
}

const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      description:
        'Makes a retry safe: 1 to 128 letters, digits, "-" or "_". The same key and body replay the first ' +
        'answer (Idempotency-Replay: true); another body, or a retry while the first still runs, is 409.',
    }),
  ),
});

export const IDEMPOTENCY_KEY_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;
/**
 * How long a reservation protects a running request. A process that dies mid-request leaves its
 * row behind; after this lease another request with the key may take it over (Stripe-like).
 */
export const RESERVATION_LEASE_MS = 5 * 60_000;
const EMPTY_BODY_SHA256 = createHash('sha256').digest('hex');

export interface IdempotencyOptions {
  db: Kysely<Database>;
  ttlHours: number;
}

function hooks<T>(existing: T | T[] | undefined): T[] {
  return existing === undefined ? [] : Array.isArray(existing) ? existing : [existing];
}

/** Wires the hooks into every route declared with `config: { idempotent: true }`. */
export function installIdempotency(app: FastifyInstance, options: IdempotencyOptions) {
  app.decorateRequest('bodySha256', null);
  app.decorateRequest('idempotencyReservation', null);
  const store = new IdempotencyStore(options.db, options.ttlHours * 3600_000);
  app.addHook('onRoute', (route: RouteOptions) => {
    if (!route.config?.idempotent) return;
    // Appended last: they run after authentication, the scope check and the route's own
    // preHandlers (a request refused before the route starts is not recorded, as with Stripe).
    route.preParsing = [...hooks(route.preParsing), hashBody];
    route.preHandler = [...hooks(route.preHandler), (request, reply) => store.reserveOrReplay(request, reply)];
    route.onSend = [...hooks(route.onSend), (request, reply, payload) => store.complete(request, reply, payload)];
    route.onResponse = [...hooks(route.onResponse), (request) => store.releaseUnfinished(request)];
    // Documented in the OpenAPI operation; checked by reserveOrReplay (for its exact 400 detail).
    if (route.schema && !route.schema.headers) {
      route.schema = { ...route.schema, headers: IdempotencyHeaders };
    }
  });
}

/** preParsing: passes the body through unchanged while hashing it. */
async function hashBody(request: FastifyRequest, _reply: FastifyReply, payload: Readable): Promise<Readable> {
  if (request.headers['idempotency-key'] === undefined) return payload;
  const hash: Hash = createHash('sha256');
  const tap = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      hash.update(chunk);
      callback(null, chunk);
    },
    flush(callback) {
      request.bodySha256 = hash.digest('hex');
      callback();
    },
  });
  // pipeline, not pipe: an aborted upload destroys the tap too, so the body reader sees the error.
  pipeline(payload, tap, () => {});
  return tap;
}

type StoredRow = Pick<
  Row<'idempotency_keys'>,
  'id' | 'fingerprint' | 'status_code' | 'response_body' | 'content_type' | 'location' | 'locked_until' | 'expires_at'
>;

class IdempotencyStore {
  readonly #db: Kysely<Database>;
  readonly #ttlMs: number;

  constructor(db: Kysely<Database>, ttlMs: number) {
    this.#db = db;
    this.#ttlMs = ttlMs;
  }

  async reserveOrReplay(request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
    const key = request.headers['idempotency-key'];
    if (key === undefined) return;
    if (typeof key !== 'string' || !IDEMPOTENCY_KEY_PATTERN.test(key)) {
      throw new ValidationError('Idempotency-Key must be 1 to 128 characters: letters, digits, "-" or "_".');
    }
    // Keys are scoped per user; an unauthenticated request (a route without scopes) has no scope
    // to keep them in, so the header is ignored there (documented in docs/traffic.md).
    const user = request.identity.user;
    if (!user) return;
    const scope = {
      user_id: user.id,
      method: request.method,
      path: pathOf(request.url),
      idempotency_key: key,
    };
    const fingerprint = request.bodySha256 ?? EMPTY_BODY_SHA256;
    // A few rounds at most: each failed round means another request changed the row in between.
    for (let round = 0; round < 5; round++) {
      const now = Date.now();
      const reserved = await this.#db
        .insertInto('idempotency_keys')
        .values({
          ...scope,
          fingerprint,
          locked_until: iso(now + RESERVATION_LEASE_MS),
          created_at: iso(now),
          expires_at: iso(now + this.#ttlMs),
        })
        .onConflict((oc) => oc.columns(['user_id', 'method', 'path', 'idempotency_key']).doNothing())
        .returning('id')
        .executeTakeFirst();
      if (reserved) {
        request.idempotencyReservation = reserved.id;
        return;
      }
      const row: StoredRow | undefined = await this.#db
        .selectFrom('idempotency_keys')
        .select([
          'id',
          'fingerprint',
          'status_code',
          'response_body',
          'content_type',
          'location',
          'locked_until',
          'expires_at',
        ])
        .where('user_id', '=', scope.user_id)
        .where('method', '=', scope.method)
        .where('path', '=', scope.path)
        .where('idempotency_key', '=', scope.idempotency_key)
        .executeTakeFirst();
      if (!row) continue; // purged or released in between: try the insert again
      const nowIso = iso(now);
      if (
        row.expires_at <= nowIso ||
        (row.status_code === null && row.locked_until !== null && row.locked_until <= nowIso)
      ) {
        // Expired (not yet purged) or abandoned by a dead process: take it over, atomically.
        if (await this.#takeOver(row, fingerprint, now)) {
          request.idempotencyReservation = row.id;
          return;
        }
        continue;
      }
      if (row.fingerprint !== fingerprint) {
        throw new ConflictError('This Idempotency-Key was already used with a different request body.');
      }
      if (row.status_code === null) {
        throw new ConflictError(
          'A request with this Idempotency-Key is still in progress; retry after it has completed.',
        );
      }
      reply.code(row.status_code).header('Idempotency-Replay', 'true');
      if (row.content_type) reply.header('Content-Type', row.content_type);
      if (row.location) reply.header('Location', row.location);
      return reply.send(row.response_body ?? '');
    }
    throw new ConflictError('A request with this Idempotency-Key is still in progress; retry after it has completed.');
  }

  async #takeOver(row: StoredRow, fingerprint: string, now: number): Promise<boolean> {
    const result = await this.#db
      .updateTable('idempotency_keys')
      .set({
        fingerprint,
        status_code: null,
        response_body: null,
        content_type: null,
        location: null,
        locked_until: iso(now + RESERVATION_LEASE_MS),
        created_at: iso(now),
        expires_at: iso(now + this.#ttlMs),
      })
      .where('id', '=', row.id)
      // Compare-and-set on what this request saw: of two takers, one wins.
      .where('expires_at', '=', row.expires_at)
      .where((eb) =>
        row.locked_until === null ? eb('locked_until', 'is', null) : eb('locked_until', '=', row.locked_until),
      )
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** onSend: stores a 2xx-4xx answer of the reserving request; a 5xx frees the key. */
  async complete(request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
    const id = request.idempotencyReservation;
    if (id === null) return payload;
    request.idempotencyReservation = null;
    const status = reply.statusCode;
    const body = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : null;
    try {
      if (status >= 500 || body === null) {
        await this.#db.deleteFrom('idempotency_keys').where('id', '=', id).execute();
        return payload;
      }
      const now = Date.now();
      await this.#db
        .updateTable('idempotency_keys')
        .set({
          status_code: status,
          response_body: body,
          content_type: headerText(reply.getHeader('content-type')),
          location: headerText(reply.getHeader('location')),
          locked_until: null,
          expires_at: iso(now + this.#ttlMs),
        })
        .where('id', '=', id)
        .execute();
    } catch (error) {
      // The route has run; its answer goes out even if it cannot be recorded. The reservation
      // then lapses after its lease and a retry runs the route again.
      request.log.error({ err: error }, 'could not record the Idempotency-Key response');
    }
    return payload;
  }

  /** onResponse: a reservation neither completed nor released (no onSend ran) is freed. */
  async releaseUnfinished(request: FastifyRequest): Promise<void> {
    const id = request.idempotencyReservation;
    if (id === null) return;
    request.idempotencyReservation = null;
    await this.#db
      .deleteFrom('idempotency_keys')
      .where('id', '=', id)
      .execute()
      .catch(() => {});
  }
}

/** Deletes expired records, in batches along the expiry index; returns how many. The worker runs it (idempotency-task.ts). */
export async function purgeExpiredIdempotencyKeys(db: Kysely<Database>, now = Date.now()): Promise<number> {
  return purgeOlderThan(db, 'idempotency_keys', 'expires_at', iso(now));
}

function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

function headerText(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  return Array.isArray(value) ? value.join(', ') : String(value);
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
