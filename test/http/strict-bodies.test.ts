// JSON request bodies are taken as written: a value of the wrong JSON type is a 400 problem naming
// the field, never guessed into the right type (query strings and path parameters are still
// coerced, as they arrive as text). The operations and their schemas come from the OpenAPI
// document, so an operation added later is covered without editing this file.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { TEST_PASSWORD, bearer, startApp, type TestApp } from '../support/app.ts';
import { acceptedTypes, operationsOf, resolve, validValue, type Document, type Schema } from '../support/openapi.ts';

/**
 * One value of every JSON type the schema refuses. Each is the one a coercing validator would
 * turn into an accepted value where it can ("true" for a boolean, [value] for a string, 1 for a
 * string), so a validator that guesses lets it through.
 */
function wrongValues(schema: Schema, doc: Document, valid: unknown): [string, unknown][] {
  const accepted = acceptedTypes(schema, doc);
  if (accepted.size === 0) return []; // any value is accepted
  const candidates: [string, unknown][] = [
    ['string', valid !== null && typeof valid !== 'object' ? String(valid) : 'x'],
    ['integer', 1],
    ['number', 1.5],
    ['boolean', true],
    ['null', null],
    ['array', [valid]],
    ['object', {}],
  ];
  return candidates.filter(([type]) => !accepted.has(type));
}

/** Every field of a body schema (properties, nested objects, array items), with its wrong values. */
function cases(
  schema: Schema,
  doc: Document,
  base: unknown,
  path: (string | number)[] = [],
): { path: (string | number)[]; value: unknown; type: string }[] {
  schema = resolve(schema, doc);
  const found: { path: (string | number)[]; value: unknown; type: string }[] = [];
  const objectBranch = [schema, ...(schema.anyOf ?? schema.oneOf ?? [])].find(
    (candidate) => resolve(candidate, doc).properties,
  );
  for (const [name, property] of Object.entries(objectBranch ? resolve(objectBranch, doc).properties! : {})) {
    const valid = (base as Record<string, unknown>)[name] ?? validValue(property, doc, name);
    for (const [type, value] of wrongValues(property, doc, valid)) found.push({ path: [...path, name], value, type });
    const resolved = resolve(property, doc);
    if (resolved.items) {
      const item = (valid as unknown[])[0];
      for (const [type, value] of wrongValues(resolved.items, doc, item))
        found.push({ path: [...path, name, 0], value, type });
    }
    if (resolved.properties) for (const inner of cases(resolved, doc, valid, [...path, name])) found.push(inner);
  }
  return found;
}

function withValue(base: unknown, path: (string | number)[], value: unknown): unknown {
  const copy = structuredClone(base) as Record<string | number, unknown>;
  let target = copy;
  for (let i = 0; i < path.length - 1; i++) {
    target[path[i]] ??= typeof path[i + 1] === 'number' ? [] : {};
    target = target[path[i]] as Record<string | number, unknown>;
  }
  target[path.at(-1)!] = value;
  return copy;
}

describe('JSON request bodies are taken as written', () => {
  let t: TestApp;
  let token: string;
  let owner: { id: number; email: string };
  const ids: Record<string, string> = {};

  /** Every row of every table of the app's database, to show that a refused request wrote nothing. */
  async function snapshot(): Promise<Record<string, string[]>> {
    const db = t.ctx.db.kysely;
    // The app's own tables only: Kysely's introspection reads every schema of the database, and on
    // PostgreSQL other test files create and drop theirs meanwhile.
    const tables = (
      t.ctx.db.dialect === 'postgres'
        ? await sql<{ name: string }>`select table_name as name from information_schema.tables
            where table_schema = current_schema() and table_type = 'BASE TABLE'`.execute(db)
        : await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(db)
    ).rows;
    const rows: Record<string, string[]> = {};
    for (const table of tables) {
      const all = await db.selectFrom(sql.table(table.name).as('t')).selectAll().execute();
      // When a credential was last used is authentication's bookkeeping, written in batches a second
      // after the use, not a change made by the request.
      rows[table.name] = all.map((row) => JSON.stringify({ ...row, last_used_at: undefined })).sort();
    }
    return rows;
  }

  before(async () => {
    t = await startApp({
      SERVICE_WEBHOOKS_ENABLED: 'true',
      SERVICE_WEBHOOKS_ALLOWED_CIDRS: '127.0.0.1/32',
      // Hundreds of requests from one address and one user: the limits are not what is tested here.
      SERVICE_THROTTLE_ANON: '100000/hour',
      SERVICE_THROTTLE_USER: '100000/hour',
      SERVICE_THROTTLE_AUTH: '100000/minute',
    });
    owner = await t.user({ staff: true });
    token = await t.token(owner.id, t.ctx.scopes.names());
    const team = await t.team(owner.id);
    const member = await t.user();
    await t.member(team.id, member.id, 'member');
    const webhook = await t.inject({
      method: 'POST',
      url: `/api/v1/teams/${team.id}/webhooks/`,
      headers: bearer(token),
      payload: { url: 'https://127.0.0.1:9/hook', events: ['*'] },
    });
    assert.equal(webhook.statusCode, 201, webhook.body);
    // A path parameter is named by the collection segment before it.
    Object.assign(ids, { teams: team.id, members: String(member.id), webhooks: webhook.json().id });
  });
  after(() => t.close());

  /** The path with every parameter replaced by a real resource of the fixture. */
  function concrete(path: string): string {
    const segments = path.split('/');
    return segments
      .map((segment, i) => {
        const param = /^\{(.+)\}$/.exec(segment);
        if (!param) return segment;
        const id = ids[segments[i - 1]];
        assert.ok(id, `${path}: no fixture for {${param[1]}} after /${segments[i - 1]}/; add one to this test`);
        return id;
      })
      .join('/');
  }

  it('every property of every JSON body: a value of a wrong type is a 400 naming the field, and nothing changes', async () => {
    const doc = (await t.inject({ url: '/api/schema/' })).json() as Document;
    const operations = operationsOf(doc)
      .filter(({ operation }) => operation.requestBody?.content['application/json'])
      .map((entry) => ({ ...entry, schema: entry.operation.requestBody!.content['application/json'].schema }));
    // The document must really list the body-taking operations (a filter that matched nothing proves nothing).
    for (const id of ['create_team', 'update_me', 'create_webhook', 'update_webhook', 'set_member_role', 'issue_jwt']) {
      assert.ok(
        operations.some(({ operation }) => operation.operationId === id),
        id,
      );
    }
    const failures: string[] = [];
    let sent = 0;
    for (const { path, method, operation, schema } of operations) {
      const url = concrete(path);
      const base = validValue(schema, doc, operation.operationId);
      const before = await snapshot();
      const all = cases(schema, doc, base);
      assert.ok(all.length > 0, `${operation.operationId}: no fields found in its body schema`);
      for (const { path: field, value, type } of all) {
        const name = field.join('.');
        const payload = withValue(base, field, value);
        const res = await t.inject({
          method: method.toUpperCase() as 'POST',
          url,
          headers: bearer(token),
          payload: payload as object,
        });
        sent++;
        const where = `${operation.operationId} ${name} as ${type} ${JSON.stringify(value)}: ${res.statusCode}`;
        if (res.statusCode !== 400) {
          failures.push(`${where} ${res.body}`);
          continue;
        }
        assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8', where);
        const errors = (res.json().errors ?? []) as { field: string; message: string }[];
        // Named with a type error (Ajv's words), not with a complaint of the handler about a guessed value.
        const typeError = /^must be (string|number|integer|boolean|array|object|null)\b/;
        if (!errors.some((error) => error.field === name && typeError.test(error.message))) {
          failures.push(`${where}: errors ${JSON.stringify(errors)} do not name ${name} as of the wrong type`);
        }
      }
      const now = await snapshot();
      const changed = Object.keys({ ...before, ...now }).filter(
        (table) => JSON.stringify(before[table]) !== JSON.stringify(now[table]),
      );
      if (changed.length > 0)
        failures.push(`${operation.operationId}: refused bodies changed the tables ${changed.join(', ')}`);
    }
    assert.deepEqual(failures, [], failures.join('\n'));
    assert.ok(sent > 50, `only ${sent} wrong bodies sent`);
  });

  it('path parameters are still coerced from their text, and form bodies (strings by nature) are taken', async () => {
    // {user_id} is an integer in its schema: the text of the path is coerced to it.
    const role = await t.inject({
      method: 'PATCH',
      url: `/api/v1/teams/${ids.teams}/members/${ids.members}/`,
      headers: bearer(token),
      payload: { role: 'admin' },
    });
    assert.equal(role.statusCode, 200, role.body);
    assert.equal(role.json().role, 'admin');
    const form = (body: string) =>
      t.inject({
        method: 'POST',
        url: '/api/auth/token/',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: body,
      });
    const issued = await form(
      new URLSearchParams({ email: owner.email, password: TEST_PASSWORD, scope: 'read:profile' }).toString(),
    );
    assert.equal(issued.statusCode, 200, issued.body);
    // A repeated form field is a list, not a string: refused like any other wrong type.
    const repeated = await form(
      new URLSearchParams([
        ['email', owner.email],
        ['email', owner.email],
        ['password', TEST_PASSWORD],
      ]).toString(),
    );
    assert.equal(repeated.statusCode, 400);
    assert.deepEqual(
      repeated.json().errors.map((error: { field: string }) => error.field),
      ['email'],
    );
  });
});
