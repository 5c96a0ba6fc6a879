// The mail capability's logger. It runs outside any request (worker, CLI, intake), so it keeps its own
// pino instance per context; tests swap in a logger that records lines (useMailLogger).
import pino, { type Logger } from 'pino';
import type { AppContext } from '../app-context.ts';

const loggers = new WeakMap<object, Logger>();

export function mailLog(ctx: Pick<AppContext, 'config'>): Logger {
  let logger = loggers.get(ctx);
  if (!logger) {
    logger = pino({ level: ctx.config.logLevel, base: { component: 'mail' } });
    loggers.set(ctx, logger);
  }
  return logger;
}

export function useMailLogger(ctx: Pick<AppContext, 'config'>, logger: Logger) {
  loggers.set(ctx, logger);
}
