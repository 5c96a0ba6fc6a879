// The bundle's resolve hook answers only what Node's resolver would answer the same way: a sibling
// chunk imported from a file directly inside the bundle's folder. Everything else goes to Node.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { siblingChunkUrl } from '../../src/util/bundle-chunks.ts';

const FOLDER = 'file:///srv/app/dist/';
const MAIN = `${FOLDER}main.js`;

describe('the bundle’s sibling-chunk resolver', () => {
  it('resolves a chunk imported by a file of the bundle to the file beside it', () => {
    assert.equal(siblingChunkUrl('./chunk-ABC123.js', MAIN, FOLDER), `${FOLDER}chunk-ABC123.js`);
    assert.equal(siblingChunkUrl('./serve-K6WN6H22.js', `${FOLDER}chunk-X.js`, FOLDER), `${FOLDER}serve-K6WN6H22.js`);
  });

  it('leaves packages, Node’s modules and non-chunk files to Node', () => {
    for (const specifier of ['pg', 'node:fs', '@fastify/swagger', './app.css', './chunk.mjs', '../main.js']) {
      assert.equal(siblingChunkUrl(specifier, MAIN, FOLDER), null, specifier);
    }
  });

  it('leaves a path with a folder, a dot-segment, a query or an encoded character to Node', () => {
    for (const specifier of ['./sub/chunk.js', './../chunk.js', './.hidden.js', './chunk.js?x=1', './chunk%2F.js']) {
      assert.equal(siblingChunkUrl(specifier, MAIN, FOLDER), null, specifier);
    }
  });

  it('answers only for importers directly inside the bundle’s folder', () => {
    for (const parent of [
      undefined,
      'file:///srv/app/node_modules/pg/lib/index.js',
      `${FOLDER}nested/chunk.js`,
      'file:///srv/app/dist-other/main.js',
      'file:///srv/app/src/main.ts',
    ]) {
      assert.equal(siblingChunkUrl('./chunk-ABC123.js', parent, FOLDER), null, String(parent));
    }
  });
});
