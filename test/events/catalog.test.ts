// The published event catalog, as a client and a receiver's tools see it: GET /api/v1/event-types/
// (no credential, the page-number envelope, every registered type with a valid JSON Schema and an
// example that passes it), and GET /api/schema/webhooks/ (a valid OpenAPI 3.1 document with one
// webhook per type, which openapi-typescript turns into TypeScript), linked from the API docs page.
import assert from 'node:assert/strict';
import https from 'node:https';
import { after, before, describe, it } from 'node:test';
import SwaggerParser from '@apidevtools/swagger-parser';
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript';
import ts from 'typescript';
import { EVENT_NAMES, EVENT_TYPES, newEnvelope, testEnvelope } from '../../src/events/index.ts';
import { bearer, startApp, type TestApp } from '../support/app.ts';
import { EventValidator, describeErrors, schemaValidator } from '../support/event-schemas.ts';
import { startReceiver } from '../support/receiver.ts';
import { testPki } from '../support/tls.ts';

const BASE_URL = 'https://api.example.com';
const CATALOG = '/api/v1/event-types/';
const SIGNATURE_HEADERS = ['X-Service-Signature', 'webhook-id', 'webhook-timestamp', 'webhook-signature'];

type Entry = {
  name: string;
  description: string;
  group: string;
  schema: Record<string, unknown>;
  example: Record<string, unknown> & { data: unknown };
  deprecated: boolean;
};
type Parameter = { name: string; in: string; required: boolean; description: string; schema: object };
type WebhooksDocument = OpenAPI3 & {
  webhooks: Record<
    string,
    {
      post: {
        operationId: string;
        deprecated: boolean;
        parameters: { $ref: string }[];
        requestBody: { content: Record<string, { schema: { $ref: string }; example: unknown }> };
      };
    }
  >;
  components: { schemas: Record<string, object>; parameters: Record<string, Parameter> };
};

describe('the event catalog', () => {
  let t: TestApp;
  let document: WebhooksDocument;
  before(async () => {
    t = await startApp({ BASE_URL, SERVICE_THROTTLE_ANON: '20/minute' });
    document = (await t.inject({ url: '/api/schema/webhooks/' })).json();
  });
  after(() => t.close());

  it('GET /api/v1/event-types/: no credential, the page-number envelope, every registered type as the registry defines it', async () => {
    const res = await t.inject({ url: CATALOG });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
    assert.match(String(res.headers['x-request-id']), /^[0-9a-f-]{36}$/);
    assert.equal(res.headers['x-ratelimit-limit'], '20');
    assert.match(String(res.headers['ratelimit-policy']), /^"anon";q=20;w=60$/);
    const body = res.json() as { count: number; next: string | null; previous: string | null; results: Entry[] };
    assert.deepEqual(Object.keys(body), ['count', 'next', 'previous', 'results']);
    assert.deepEqual([body.count, body.next, body.previous], [EVENT_NAMES.length, null, null]);
    assert.deepEqual(
      body.results.map((entry) => entry.name),
      EVENT_NAMES,
    );
    for (const entry of body.results) {
      const definition = EVENT_TYPES[entry.name as keyof typeof EVENT_TYPES];
      assert.deepEqual(Object.keys(entry), ['name', 'description', 'group', 'schema', 'example', 'deprecated']);
      assert.deepEqual(
        [entry.description, entry.group, entry.deprecated],
        [definition.description, definition.group, definition.deprecated],
      );
      assert.ok(entry.description.length > 0 && entry.group.length > 0, entry.name);
      // A whole envelope, in the key order of the outbox's, whose data is the registry's example.
      assert.deepEqual(
        Object.keys(entry.example),
        Object.keys(newEnvelope(entry.name as keyof typeof EVENT_TYPES, 'team', {})),
      );
      assert.deepEqual(
        [entry.example.type, entry.example.api_version, entry.example.data],
        [entry.name, 'v1', definition.example],
      );
    }
    // The same answer with a credential (counted in the caller's own bucket) and on every request.
    const user = await t.user();
    const withToken = await t.inject({ url: CATALOG, headers: bearer(await t.token(user.id, ['read:profile'])) });
    assert.equal(withToken.statusCode, 200);
    assert.match(String(withToken.headers['ratelimit-policy']), /^"user";/);
    assert.deepEqual(withToken.json(), body);
  });

  it('each schema is valid JSON Schema, its example passes it, and data that breaks it does not', async () => {
    const { results } = (await t.inject({ url: CATALOG })).json() as { results: Entry[] };
    const ajv = schemaValidator();
    for (const entry of results) {
      assert.equal(entry.schema.$schema, 'https://json-schema.org/draft/2020-12/schema');
      const validate = ajv.compile(entry.schema);
      assert.ok(validate(entry.example.data), `${entry.name}: ${describeErrors(validate)}`);
      const required = entry.schema.required as string[];
      assert.ok(required.length > 0, entry.name);
      const { [required[0]]: _, ...missing } = entry.example.data as Record<string, unknown>;
      assert.equal(validate(missing), false, `${entry.name} without ${required[0]}`);
      assert.equal(
        validate({ ...(entry.example.data as object), [required[0]]: [] }),
        false,
        `${entry.name} with a list as ${required[0]}`,
      );
      // A test delivery's data is the example with `test: true`: valid too.
      assert.ok(validate(testEnvelope(entry.name as keyof typeof EVENT_TYPES, 'team').data), entry.name);
    }
  });

  it('pages past the end and slash-less paths are 404, as everywhere in the API', async () => {
    const past = await t.inject({ url: `${CATALOG}?page=2` });
    assert.equal(past.statusCode, 404);
    assert.equal(past.json().detail, 'Invalid page.');
    assert.equal(past.json().request_id, past.headers['x-request-id']);
    assert.equal((await t.inject({ url: CATALOG.slice(0, -1) })).statusCode, 404);
  });

  it("is counted in the anonymous bucket of the caller's address: 429 past SERVICE_THROTTLE_ANON", async () => {
    const remoteAddress = '198.51.100.7';
    for (let i = 0; i < 20; i++) assert.equal((await t.inject({ url: CATALOG, remoteAddress })).statusCode, 200);
    const refused = await t.inject({ url: CATALOG, remoteAddress });
    assert.equal(refused.statusCode, 429);
    assert.deepEqual(refused.json()['violated-policies'], ['anon']);
    assert.equal(
      (await t.inject({ url: CATALOG, remoteAddress: '198.51.100.8' })).statusCode,
      200,
      'another address has its own bucket',
    );
  });

  it('the OpenAPI 3.0 document lists it as list_event_types, needing no credential, and the docs page links both', async () => {
    const api = (await t.inject({ url: '/api/schema/' })).json();
    const operation = api.paths[CATALOG].get;
    assert.equal(operation.operationId, 'list_event_types');
    assert.deepEqual(operation.security, []);
    assert.deepEqual(Object.keys(operation.responses).sort(), ['200', '404', '429']);
    assert.deepEqual(Object.keys(api.components.schemas.EventType.properties), [
      'name',
      'description',
      'group',
      'schema',
      'example',
      'deprecated',
    ]);
    assert.equal(api.paths['/api/schema/webhooks/'], undefined, 'the webhooks document is not an operation of the API');
    // The API docs page shows the document's description: both links, absolute, and they answer.
    const shown = (await t.inject({ url: '/api/docs/json' })).json().info.description as string;
    for (const path of [CATALOG, '/api/schema/webhooks/']) {
      assert.ok(shown.includes(`](${BASE_URL}${path})`), `${path} in ${shown}`);
      assert.equal((await t.inject({ url: path })).statusCode, 200, path);
    }
  });

  it('GET /api/schema/webhooks/: a valid OpenAPI 3.1 document, one webhook per type, its body the envelope schema', async () => {
    const validate = (doc: unknown) =>
      SwaggerParser.validate(structuredClone(doc) as Parameters<typeof SwaggerParser.validate>[0]);
    await validate(document);
    const broken = structuredClone(document);
    delete (broken.webhooks['team.member.added'].post.requestBody as { content?: unknown }).content;
    await assert.rejects(validate(broken), /content/);

    assert.equal(document.openapi, '3.1.0');
    assert.deepEqual(Object.keys(document.webhooks), EVENT_NAMES);
    assert.deepEqual(Object.keys(document.components.schemas), EVENT_NAMES);
    const headers = Object.values(document.components.parameters);
    for (const name of SIGNATURE_HEADERS) {
      const header = headers.find((parameter) => parameter.name === name);
      assert.ok(header, name);
      assert.equal(header.in, 'header');
      assert.ok(header.description.length > 40, `${name} is documented`);
    }
    assert.equal(headers.find((parameter) => parameter.name === 'X-Service-Signature')!.required, true);
    const ajv = schemaValidator();
    const { results } = (await t.inject({ url: CATALOG })).json() as { results: Entry[] };
    for (const type of EVENT_NAMES) {
      const { post } = document.webhooks[type];
      assert.equal(post.operationId, type.replaceAll('.', '_'));
      assert.equal(post.deprecated, EVENT_TYPES[type].deprecated);
      assert.deepEqual(
        post.parameters
          .map((p) => document.components.parameters[p.$ref.split('/').at(-1)!].name)
          .filter((name) => SIGNATURE_HEADERS.includes(name)),
        SIGNATURE_HEADERS,
      );
      const body = post.requestBody.content['application/json'];
      assert.equal(body.schema.$ref, `#/components/schemas/${type}`);
      // The envelope schema accepts the catalog's example (the same in both documents) and refuses another type's.
      const check = ajv.compile(document.components.schemas[type]);
      const example = results.find((entry) => entry.name === type)!.example;
      assert.deepEqual(body.example, example);
      assert.ok(check(example), `${type}: ${describeErrors(check)}`);
      assert.equal(check({ ...example, type: EVENT_NAMES.find((other) => other !== type) }), false);
      assert.equal(check({ ...example, id: 'evt_1' }), false);
      assert.equal(new EventValidator(document.components.schemas).problem(JSON.stringify(example)), null);
    }
  });

  it('openapi-typescript turns the 3.1 document into TypeScript that parses without error', async () => {
    const source = astToString(await openapiTS(structuredClone(document), { silent: true }));
    const { diagnostics } = ts.transpileModule(source, {
      reportDiagnostics: true,
      compilerOptions: { module: ts.ModuleKind.ESNext },
    });
    assert.deepEqual(
      diagnostics?.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')),
      [],
    );
    assert.match(source, /export interface webhooks \{/);
    for (const type of EVENT_NAMES) assert.ok(source.includes(`"${type}": {`), `${type} in the generated types`);
    // The signature headers are typed, X-Service-Signature required and the Standard Webhooks ones optional.
    assert.match(source, /"X-Service-Signature": components\["parameters"\]\["ServiceSignature"\];/);
    assert.match(source, /"webhook-signature"\?: components\["parameters"\]\["WebhookSignature"\];/);
    assert.match(source, /role: "owner" \| "admin" \| "member";/);
  });
});

describe('the shared webhook receiver checks every delivery against the catalog', () => {
  it('a body that is not a valid event of its type fails waitFor and close', async () => {
    const r = await startReceiver();
    const { caPem } = await testPki();
    const post = (body: string) =>
      new Promise<void>((resolve, reject) => {
        const request = https.request(
          r.url,
          { method: 'POST', ca: caPem, headers: { 'content-type': 'application/json' } },
          (res) => res.resume().on('end', resolve),
        );
        request.on('error', reject);
        request.end(body);
      });
    await post(JSON.stringify(testEnvelope('team.member.added', '8f14e45f-ceea-467f-a0e5-0d3b5c4a1b2c')));
    assert.equal((await r.waitFor(1)).length, 1);
    const { role: _, ...data } = EVENT_TYPES['team.member.added'].example;
    await post(JSON.stringify(newEnvelope('team.member.added', '8f14e45f-ceea-467f-a0e5-0d3b5c4a1b2c', data)));
    await assert.rejects(r.waitFor(2), /team\.member\.added: \/data must have required property 'role'/);
    await assert.rejects(r.close(), /not a valid event of the published catalog/);
  });
});
