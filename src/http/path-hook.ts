// Global onRequest hooks that concern a few paths (the pages' session and CSRF state, the OAuth
// mount) run on every request, the API's included. Written as async functions, each cost every API
// request a promise and a microtask turn just to return at once. A hook built here tests the path
// synchronously and calls Fastify's `done` at once when it does not apply; only the requests it
// applies to pay for the asynchronous work.
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';

export type AsyncHook = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

/** A callback-style onRequest hook running `hook` only for URLs that `applies` accepts. */
export function hookForPaths(applies: (url: string) => boolean, hook: AsyncHook) {
  return (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    if (!applies(request.url)) return done();
    // As Fastify treats an async hook: a reply sent (or hijacked) by `hook` ends the chain at done().
    hook(request, reply).then(() => done(), done);
  };
}
