// The stylesheet: water.css (a classless CSS library, served from its npm package, no CDN) plus a
// few lines of our own. Read once at start and served with a content hash in the URL, so browsers
// cache it for a year and a new release changes the URL.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import type { FastifyInstance } from 'fastify';
import { assetPath } from './assets.ts';

const require = createRequire(import.meta.url);

function load(): { css: string; hash: string } {
  const water = fs.readFileSync(require.resolve('water.css/out/light.min.css'), 'utf8');
  const own = fs.readFileSync(assetPath('web/app.css'), 'utf8');
  const css = `${water}\n${own}`;
  return { css, hash: createHash('sha256').update(css).digest('hex').slice(0, 12) };
}

const stylesheet = load();

/** The path pages link to. */
export const STYLESHEET_PATH = `/static/style.${stylesheet.hash}.css`;

export function registerStatic(app: FastifyInstance) {
  app.get(STYLESHEET_PATH, { schema: { hide: true } }, async (_request, reply) => {
    reply.header('Cache-Control', 'public, max-age=31536000, immutable');
    return reply.type('text/css; charset=utf-8').send(stylesheet.css);
  });
}
