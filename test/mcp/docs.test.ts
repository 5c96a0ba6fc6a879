// docs/mcp.md's tool list and scope table are the catalog the service serves (webhooks on, so that
// every tool is listed): a route added, renamed or re-scoped without `npm run generate:mcp-docs`
// fails here. The docs://api resource is made from the same catalog.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DOCS_BEGIN, DOCS_END, apiDocument, docsBlock } from '../../src/mcp/api-docs.ts';
import { buildCatalog, type OpenApiDocument } from '../../src/mcp/catalog.ts';
import { startApp, type TestApp } from '../support/app.ts';

describe('docs/mcp.md', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp({ SERVICE_WEBHOOKS_ENABLED: 'true' });
  });
  after(() => t?.close());

  it('lists exactly the tools and scopes the service serves (npm run generate:mcp-docs)', async () => {
    const catalog = buildCatalog((await t.app.openApiDocument!()) as OpenApiDocument, { webhooksEnabled: true });
    const text = fs.readFileSync(fileURLToPath(new URL('../../docs/mcp.md', import.meta.url)), 'utf8');
    const written = text.slice(text.indexOf(DOCS_BEGIN), text.indexOf(DOCS_END) + DOCS_END.length);
    assert.equal(
      written,
      docsBlock(catalog, t.ctx.scopes.names()),
      'docs/mcp.md is out of date: run npm run generate:mcp-docs',
    );
    const resource = apiDocument(catalog, '');
    for (const tool of catalog) assert.ok(resource.includes(`### ${tool.definition.name}\n`), tool.definition.name);
  });
});
