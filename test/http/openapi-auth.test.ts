// The OpenAPI document tells clients the truth about authentication: it is a valid OpenAPI 3.0
// document, OAuth 2.0 is an oauth2 scheme with the server's real endpoints and every scope, the
// bearer scheme (PATs, JWTs) names no scopes, and every scope an operation accepts is an
// alternative of its own, exactly the scopes the service really accepts there.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import SwaggerParser from '@apidevtools/swagger-parser';
import { bearer, startApp, type TestApp } from '../support/app.ts';
import { operationsOf, validValue, type Document } from '../support/openapi.ts';

type SecurityScheme = {
  type: string;
  scheme?: string;
  flows?: Record<
    string,
    { authorizationUrl?: string; tokenUrl?: string; refreshUrl?: string; scopes: Record<string, string> }
  >;
};

describe('the OpenAPI document on authentication', () => {
  let t: TestApp;
  let doc: Document & { components: { securitySchemes: Record<string, SecurityScheme> } };
  before(async () => {
    t = await startApp({
      // A deployer's scope: the document lists the registry, not a copy of the built-in scopes.
      SERVICE_EXTRA_SCOPES: 'read:reports',
      SERVICE_THROTTLE_ANON: '100000/hour',
      SERVICE_THROTTLE_USER: '100000/hour',
    });
    doc = (await t.inject({ url: '/api/schema/' })).json();
  });
  after(() => t.close());

  it('validates against the OpenAPI 3.0 schema', async () => {
    // The validator dereferences the document it is given: it gets a copy.
    const validate = (document: unknown) =>
      SwaggerParser.validate(structuredClone(document) as Parameters<typeof SwaggerParser.validate>[0]);
    await validate(doc);
    // The validator reads the security schemes too: an authorization-code flow without its token URL is refused.
    const broken = structuredClone(doc);
    delete broken.components.securitySchemes.oauth2.flows!.authorizationCode.tokenUrl;
    await assert.rejects(validate(broken), /tokenUrl/);
  });

  it('declares OAuth 2.0 with the real endpoints and every scope of the registry, and a bearer scheme without scopes', async () => {
    const metadata = (await t.inject({ url: '/.well-known/oauth-authorization-server' })).json();
    const { oauth2, bearerAuth, ...others } = doc.components.securitySchemes;
    assert.deepEqual(Object.keys(others), []);
    assert.equal(oauth2.type, 'oauth2');
    assert.deepEqual(Object.keys(oauth2.flows!), ['authorizationCode']);
    const flow = oauth2.flows!.authorizationCode;
    assert.equal(flow.authorizationUrl, metadata.authorization_endpoint);
    assert.equal(flow.tokenUrl, metadata.token_endpoint);
    assert.equal(flow.refreshUrl, metadata.token_endpoint);
    assert.equal(flow.authorizationUrl, 'http://testserver/o/authorize/');
    assert.deepEqual(
      flow.scopes,
      Object.fromEntries(t.ctx.scopes.list().map((scope) => [scope.name, scope.description])),
    );
    assert.ok(flow.scopes['read:reports'] && flow.scopes['webhooks:manage']);
    assert.deepEqual(Object.keys(flow.scopes).sort(), [...metadata.scopes_supported].sort());
    assert.deepEqual([bearerAuth.type, bearerAuth.scheme, bearerAuth.flows], ['http', 'bearer', undefined]);
  });

  it('gives every accepted scope its own requirement object, and no bearer requirement names a scope', () => {
    const problems: string[] = [];
    const open: string[] = [];
    for (const { path, method, operation } of operationsOf(doc)) {
      const where = `${method.toUpperCase()} ${path}`;
      const security = operation.security;
      if (!security) {
        if (path.startsWith('/api/v1/')) problems.push(`${where}: no security`);
        continue;
      }
      // `security: []` declares an operation that needs no credential.
      if (security.length === 0) {
        open.push(where);
        continue;
      }
      for (const requirement of security) {
        const schemes = Object.keys(requirement);
        if (schemes.length !== 1)
          problems.push(`${where}: ${JSON.stringify(requirement)} requires ${schemes.length} schemes at once`);
        for (const [scheme, scopes] of Object.entries(requirement)) {
          const type = doc.components.securitySchemes[scheme]?.type;
          if (type === 'oauth2' && scopes.length !== 1)
            problems.push(`${where}: ${JSON.stringify(requirement)} requires ${scopes.length} scopes at once`);
          if (type !== 'oauth2' && scopes.length !== 0) problems.push(`${where}: ${scheme} (${type}) names scopes`);
        }
      }
      if (!security.some((requirement) => requirement.oauth2)) problems.push(`${where}: no oauth2 alternative`);
      if (security.filter((requirement) => requirement.bearerAuth).length !== 1)
        problems.push(`${where}: not one bearerAuth alternative`);
    }
    assert.deepEqual(problems, [], problems.join('\n'));
    assert.deepEqual(open, ['GET /api/v1/event-types/'], 'the only operations declared open');
  });

  it('the operations declared open answer without a credential', async () => {
    for (const { path, method, operation } of operationsOf(doc)) {
      if (operation.security?.length !== 0) continue;
      const res = await t.inject({ method: method.toUpperCase() as 'GET', url: path });
      assert.equal(res.statusCode, 200, `${method.toUpperCase()} ${path}: ${res.body}`);
    }
  });

  it('lists exactly the scopes the service accepts: a token with any one passes the scope check, one without them is 403', async () => {
    const user = await t.user({ staff: true });
    const tokens = new Map<string, string>();
    const tokenFor = async (scope: string) => {
      if (!tokens.has(scope)) tokens.set(scope, await t.token(user.id, [scope]));
      return tokens.get(scope)!;
    };
    const problems: string[] = [];
    let checked = 0;
    for (const { path, method, operation } of operationsOf(doc)) {
      const accepted = (operation.security ?? []).flatMap((requirement) => requirement.oauth2 ?? []);
      if (accepted.length === 0) continue;
      // Parameters and a body that pass validation, which comes before the scope check: the ids
      // name nothing, so what passes the check is then a 404 or a 4xx of the handler, not a change.
      let url = path;
      for (const parameter of operation.parameters ?? []) {
        if (parameter.in === 'path')
          url = url.replace(
            `{${parameter.name}}`,
            encodeURIComponent(String(validValue(parameter.schema ?? {}, doc, parameter.name))),
          );
      }
      const schema = operation.requestBody?.content['application/json']?.schema;
      const send = async (headers: Record<string, string>) =>
        t.inject({
          method: method.toUpperCase() as 'GET',
          url,
          headers,
          ...(schema ? { payload: validValue(schema, doc, operation.operationId) as object } : {}),
        });
      const refusedForScope = (res: { statusCode: number; json(): { detail?: string } }) =>
        res.statusCode === 401 || (res.statusCode === 403 && /lacks/.test(res.json().detail ?? ''));
      const where = `${method.toUpperCase()} ${path}`;
      if ((await send({})).statusCode !== 401) problems.push(`${where}: not 401 without a credential`);
      for (const scope of accepted) {
        const res = await send(bearer(await tokenFor(scope)));
        if (refusedForScope(res))
          problems.push(`${where}: listed ${scope} but refused it: ${res.statusCode} ${res.body}`);
        checked++;
      }
      const other = t.ctx.scopes.names().find((scope) => !accepted.includes(scope))!;
      const refused = await send(bearer(await tokenFor(other)));
      if (!refusedForScope(refused))
        problems.push(`${where}: did not list ${other} and accepted it: ${refused.statusCode}`);
    }
    assert.deepEqual(problems, [], problems.join('\n'));
    assert.ok(checked > 20, `only ${checked} scopes checked`);
  });
});
