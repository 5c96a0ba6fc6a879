// One log line per request (pino, JSON), written when the response completes; Fastify's default
// writes two (incoming and completed). The request id is on every line of the request.
//
// On the hot path the line is built here rather than by a per-request pino child: Fastify makes
// a child logger for every request (serialising its bindings), and pino then walks the line's
// object; for the one line most requests ever log, that work is a large share of a /api/v1/me/
// request (docs/performance.md, Logging). RequestLogger makes the child only when something logs
// through request.log (an error, a route adding bindings); the line is then pino's own. The line
// written here has exactly the bytes pino would write: same key order, pino's own level, time and base.
import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest } from 'fastify';
import pino, { type Bindings, type ChildLoggerOptions, type Logger } from 'pino';

const INFO = 30;
type AnyLogFn = (...args: unknown[]) => void;

/** request.log: the pino child of the request, made on first use. */
export class RequestLogger {
  readonly #parent: Logger;
  readonly #bindings: Bindings;
  readonly #options: ChildLoggerOptions;
  #child: Logger | null = null;

  constructor(parent: Logger, bindings: Bindings, options: ChildLoggerOptions) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#options = options;
  }

  get #log(): Logger {
    return (this.#child ??= this.#parent.child(this.#bindings, this.#options));
  }

  /** True once something has logged through this request's logger (its line is then pino's). */
  get used(): boolean {
    return this.#child !== null;
  }

  get level(): string {
    return this.#child?.level ?? this.#parent.level;
  }
  set level(level: string) {
    this.#log.level = level;
  }

  // Methods on the prototype (one RequestLogger per request: no closures made per request).
  fatal(...args: unknown[]): void {
    (this.#log.fatal as AnyLogFn)(...args);
  }
  error(...args: unknown[]): void {
    (this.#log.error as AnyLogFn)(...args);
  }
  warn(...args: unknown[]): void {
    (this.#log.warn as AnyLogFn)(...args);
  }
  info(...args: unknown[]): void {
    (this.#log.info as AnyLogFn)(...args);
  }
  debug(...args: unknown[]): void {
    (this.#log.debug as AnyLogFn)(...args);
  }
  trace(...args: unknown[]): void {
    (this.#log.trace as AnyLogFn)(...args);
  }
  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#log.child(bindings, options);
  }

  /** pino's: fields added to every later line of the request, its request line included. */
  setBindings(bindings: Bindings): void {
    this.#log.setBindings(bindings);
  }

  /** The request line, written straight to the parent's destination (the child was never needed). */
  writeRequestLine(method: string, url: string, status: number, ms: number): void {
    const parent = this.#parent;
    if (parent.levelVal > INFO) return;
    const stream = (parent as unknown as Record<symbol, { write(line: string): void }>)[pino.symbols.streamSym];
    const base = (parent as unknown as Record<symbol, string>)[pino.symbols.chindingsSym];
    // The request's bindings (Fastify's: the request id under its label) as the child would write them.
    const bindings = JSON.stringify(this.#bindings).slice(1, -1);
    stream.write(
      `{"level":${INFO},"time":${Date.now()}${base},${bindings},"method":${JSON.stringify(method)},` +
        `"url":${JSON.stringify(url)},"status":${status},"ms":${ms},"msg":"request"}\n`,
    );
  }
}

/** Fastify's childLoggerFactory: a RequestLogger instead of an eager pino child. */
export function requestChildLogger(
  logger: FastifyBaseLogger,
  bindings: Bindings,
  options: ChildLoggerOptions,
): FastifyBaseLogger {
  return new RequestLogger(logger as Logger, bindings, options) as unknown as FastifyBaseLogger;
}

export class OneLinePerRequest extends LogController {
  constructor() {
    super({ requestIdLogLabel: 'request_id' });
  }
  override incomingRequest(): void {}
  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const ms = Math.round(reply.elapsedTime * 100) / 100;
    const log = request.log as FastifyBaseLogger | RequestLogger;
    if (!error && log instanceof RequestLogger && !log.used)
      return log.writeRequestLine(request.method, request.url, reply.statusCode, ms);
    const line = { method: request.method, url: request.url, status: reply.statusCode, ms };
    if (error) request.log.error({ ...line, err: error }, 'request failed');
    else request.log.info(line, 'request');
  }
}
