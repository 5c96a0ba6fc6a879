// The webhooks capability's logger for work outside requests (the delivery worker). One pino
// instance per context; tests swap in a logger that records lines (useWebhookLogger). Secrets are
// never passed to it: only ids, URLs, status codes and reasons.
import pino, { type Logger } from 'pino';
import type { AppContext } from '../app-context.ts';

const loggers = new WeakMap<object, Logger>();

export function webhookLog(ctx: Pick<AppContext, 'config'>): Logger {
  let logger = loggers.get(ctx);
  if (!logger) {
    logger = pino({ level: ctx.config.logLevel, base: { component: 'webhooks' } });
    loggers.set(ctx, logger);
  }
  return logger;
}

export function useWebhookLogger(ctx: Pick<AppContext, 'config'>, logger: Logger) {
  loggers.set(ctx, logger);
}

/** Logged once per process that relaxes the guard (SERVICE_WEBHOOKS_ALLOWED_CIDRS). */
const warned = new WeakSet<object>();
export function warnIfGuardRelaxed(ctx: Pick<AppContext, 'config'>): void {
  const cidrs = ctx.config.webhooks.allowedCidrs;
  if (cidrs.length === 0 || warned.has(ctx)) return;
  warned.add(ctx);
  webhookLog(ctx).warn(
    { allowed_cidrs: cidrs },
    'SERVICE_WEBHOOKS_ALLOWED_CIDRS is set: webhook URLs may reach these networks. Use it only in development and tests.',
  );
}
