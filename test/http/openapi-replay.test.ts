// With the API docs off and the MCP endpoint on, the OpenAPI document is built on first use from
// the recorded routes (src/http/openapi-replay.ts). It must be the very document the plugin serves
// at /api/schema/ when the docs are on: the MCP tools are made from it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startApp, type TestApp } from '../support/app.ts';

describe('the OpenAPI document built on first use', () => {
  const apps: TestApp[] = [];
  let served: TestApp;
  let recorded: TestApp;
  before(async () => {
    const env = { SERVICE_WEBHOOKS_ENABLED: 'true', SERVICE_MCP_ENABLED: 'true' };
    served = await startApp({ ...env, SERVICE_API_DOCS_PUBLIC: 'true' });
    apps.push(served);
    recorded = await startApp({ ...env, SERVICE_API_DOCS_PUBLIC: 'false' });
    apps.push(recorded);
  });
  after(() => Promise.all(apps.map((app) => app.close())));

  it('equals the document /api/schema/ serves with the docs on', async () => {
    const response = await served.inject({ method: 'GET', url: '/api/schema/' });
    assert.equal(response.statusCode, 200);
    const document = (await recorded.app.openApiDocument!()) as { paths: Record<string, unknown> };
    assert.ok(Object.keys(document.paths).length > 20, 'the document lists the API');
    assert.deepEqual(document, response.json());
    assert.equal(await recorded.app.openApiDocument!(), document, 'built once, then kept');
  });

  it('is not served when the docs are off', async () => {
    for (const url of ['/api/schema/', '/api/docs/']) {
      const response = await recorded.inject({ method: 'GET', url });
      assert.equal(response.statusCode, 404, url);
    }
  });

  it('is not recorded at all with both the docs and the MCP endpoint off', async () => {
    const bare = await startApp({ SERVICE_API_DOCS_PUBLIC: 'false', SERVICE_MCP_ENABLED: 'false' });
    apps.push(bare);
    assert.equal(bare.app.openApiDocument, undefined);
  });
});
