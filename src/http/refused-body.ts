// A request refused before its body was read (over the body limit: 413) is answered at once, and its
// connection closes after the answer. Node closes such a connection with socket.destroySoon(): end,
// then destroy as soon as the answer is flushed. The client is usually still sending its body then,
// and closing a socket with unread bytes makes the kernel send a reset: the client's next write
// fails (EPIPE) and the reset may throw away the answer before the client has read it. So the close
// lingers: the answer and a FIN go out, the rest of the body is read and thrown away, and the socket
// is destroyed when the body has ended (nothing unread, no reset), when the client closes, or when
// the drain passes its bounds (bytes, total time, time without a byte), so that a slow or endless
// client cannot hold the connection. Nothing in Fastify or Node does this lingering close.
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

/** Bytes of a refused body read and discarded after the answer, at most. */
export const DRAIN_MAX_BYTES = 32 * 1024 * 1024;
/** The longest a refused body is drained after the answer. */
export const DRAIN_MAX_MS = 10_000;
/** A client that sends nothing for this long after the answer is disconnected. */
export const DRAIN_IDLE_MS = 2_000;

const CLOSING = Symbol('svc.closingAfterRefusal');
type ClosingSocket = Socket & { [CLOSING]?: true; destroySoon?: () => void };

/** True on a connection whose last answer refused an unread body: nothing more is run on it. */
export function isClosingConnection(request: IncomingMessage): boolean {
  return (request.socket as ClosingSocket | null)?.[CLOSING] === true;
}

/**
 * Call before sending an answer (with `Connection: close`) that refuses `request` while its body is
 * still arriving: the connection then closes by draining instead of by a reset.
 */
export function closeAfterAnswer(request: IncomingMessage) {
  const socket = request.socket as ClosingSocket | null;
  if (!socket || socket.destroyed || socket[CLOSING]) return;
  socket[CLOSING] = true;
  const drain = { bytes: 0, idle: null as NodeJS.Timeout | null, close: () => socket.destroy() };
  // Read (and drop) the body from now on. Without a reader Node would "dump" it after the answer,
  // which discards it without telling anyone how much arrived, and the bounds need to know.
  request.on('data', (chunk: Buffer) => {
    drain.bytes += chunk.length;
    if (drain.bytes > DRAIN_MAX_BYTES) return drain.close();
    drain.idle?.refresh();
  });
  // Node calls destroySoon() once the `Connection: close` answer is written (http server's resOnFinish).
  socket.destroySoon = () => drainThenClose(socket, request, drain);
}

function drainThenClose(
  socket: Socket,
  request: IncomingMessage,
  drain: { idle: NodeJS.Timeout | null; close: () => void },
) {
  let bodyEnded = request.complete;
  let flushed = socket.writableFinished;
  const cap = setTimeout(() => drain.close(), DRAIN_MAX_MS);
  drain.idle = setTimeout(() => drain.close(), DRAIN_IDLE_MS);
  socket.once('close', () => {
    clearTimeout(cap);
    clearTimeout(drain.idle!);
  });
  const closeWhenDone = () => {
    if (bodyEnded && flushed) drain.close();
  };
  // The answer, then FIN: the client reads the whole answer and the end of the stream.
  socket.end();
  socket.once('finish', () => {
    flushed = true;
    closeWhenDone();
  });
  request.once('end', () => {
    bodyEnded = true;
    closeWhenDone();
  });
  closeWhenDone();
}

/**
 * Fastify answers a body over the limit (its content-type parser's errors) with `Connection: close`
 * before reading the body, or as soon as a chunked body passes the limit: those answers close by
 * draining. Runs only on errors, so the hot path pays nothing.
 */
export function installRefusedBodyClose(app: FastifyInstance) {
  app.addHook('onError', (request, reply, _error, done) => {
    if (!request.raw.complete && reply.getHeader('connection') === 'close') closeAfterAnswer(request.raw);
    done();
  });
}
