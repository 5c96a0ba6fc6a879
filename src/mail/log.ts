// The mail capability's logger. It runs outside any request (worker, CLI, intake), so each app has a
// pino instance of its own (ctx.mail.log, made on first use); tests swap in a logger that records
// lines (useMailLogger).
import pino, { type Logger } from 'pino';
import type { AppContext } from '../app-context.ts';

export function mailLog(ctx: Pick<AppContext, 'config' | 'mail'>): Logger {
  return (ctx.mail.log ??= pino({ level: ctx.config.logLevel, base: { component: 'mail' } }));
}

export function useMailLogger(ctx: Pick<AppContext, 'mail'>, logger: Logger) {
  ctx.mail.log = logger;
}
