// The Prometheus metrics of one app (ctx.metrics): a registry of its own and every series the service
// records (docs/operations.md, "Monitoring"). Made by enableMetrics() only in a process that serves them
// (`svc serve` with SERVICE_METRICS_TOKEN, `svc worker` with SERVICE_WORKER_METRICS_PORT); elsewhere
// ctx.metrics is null and every recording call site is one null check. This module loads the client
// library, so the service imports it only when metrics are on (app.ts, main.ts).
//
// No label carries an id, an address or a token: every label value comes from a fixed set (a route
// template, a method, a status code, an outcome), so the number of series stays bounded whatever the
// traffic.
import { Counter, Histogram, Registry, collectDefaultMetrics } from '@prometheus-io/client';
import type { AppContext } from '../app-context.ts';
import type { ThrottleKind } from '../http/throttle.ts';
import { RequestDurations, type RouteDurations } from './route-durations.ts';
import { queueGauges } from './queue-gauges.ts';

/** What refused a request: a throttle bucket (SERVICE_THROTTLE_*), or a lock after failed attempts. */
export type RefusalLimit = ThrottleKind | 'failed_attempts';
const REFUSAL_LIMITS: readonly RefusalLimit[] = ['anon', 'user', 'auth', 'failed_attempts'];

/** success; failed (another attempt follows); dead_letter (the last attempt failed); not_sent (inactive). */
export type DeliveryOutcome = 'success' | 'failed' | 'dead_letter' | 'not_sent';
const DELIVERY_OUTCOMES: readonly DeliveryOutcome[] = ['success', 'failed', 'dead_letter', 'not_sent'];

export type MailOutcome = 'sent' | 'suppressed' | 'failed';
const MAIL_OUTCOMES: readonly MailOutcome[] = ['sent', 'suppressed', 'failed'];

/** The SES event of a notification, the SNS message type otherwise, or `unknown` before a valid envelope. */
export type SnsType = string;
export type SnsResult =
  'recorded' | 'duplicate' | 'ignored' | 'confirmed' | 'acknowledged' | 'refused' | 'invalid' | 'failed';

/** What a delivery attempt's metrics need of its result (the worker's AttemptResult has these fields). */
export interface DeliveryAttempt {
  ok: boolean;
  attempted: boolean;
  durationMs: number | null;
  delivery: { attempt: number };
}

/** The route label of a request no route matched (a 404 or 405): never its path. */
export const UNMATCHED_ROUTE = 'unmatched';

const HTTP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const DELIVERY_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** One label object per value, made once: recording reuses it instead of building one per call. */
function labelSets<V extends string, K extends string>(name: K, values: readonly V[]): Record<V, Record<K, V>> {
  return Object.fromEntries(values.map((value) => [value, { [name]: value }])) as Record<V, Record<K, V>>;
}

export class Metrics {
  readonly registry = new Registry();
  readonly #maxRetries: number;
  readonly #requestDurations: RequestDurations;
  readonly #refusals: Counter<'limit'>;
  readonly #refusalLabels = labelSets('limit', REFUSAL_LIMITS);
  readonly #deliveries: Counter<'outcome'>;
  readonly #deliveryLabels = labelSets('outcome', DELIVERY_OUTCOMES);
  readonly #deliveryDurations: Histogram;
  readonly #mails: Counter<'outcome'>;
  readonly #mailLabels = labelSets('outcome', MAIL_OUTCOMES);
  readonly #sns: Counter<'type' | 'result'>;
  readonly #snsLabels = new Map<string, Record<string, { type: string; result: string }>>();
  /** Requests answered before routing (the OAuth mount) and the route template each answered for. */
  readonly #named = new WeakMap<object, string>();
  /** The series of requests without a Fastify route, by route label. */
  readonly #unrouted = new Map<string, RouteDurations>();

  constructor(ctx: Pick<AppContext, 'config' | 'db'>) {
    const registers = [this.registry];
    this.#maxRetries = ctx.config.webhooks.maxRetries;
    this.#requestDurations = new RequestDurations(HTTP_BUCKETS, this.registry);
    this.#refusals = new Counter({
      name: 'rate_limit_refusals_total',
      help: 'Requests refused by a rate limit (429): the throttle buckets anon, user and auth, and failed_attempts (a login, code or reset lock).',
      labelNames: ['limit'] as const,
      registers,
    });
    this.#deliveries = new Counter({
      name: 'webhook_deliveries_total',
      help: 'Webhook delivery attempts by outcome: success, failed (retried later), dead_letter (the last attempt failed), not_sent (subscription or team inactive).',
      labelNames: ['outcome'] as const,
      registers,
    });
    this.#deliveryDurations = new Histogram({
      name: 'webhook_delivery_duration_seconds',
      help: 'Duration of the webhook delivery attempts that were sent: DNS, connect and answer.',
      buckets: DELIVERY_BUCKETS,
      registers,
    });
    this.#mails = new Counter({
      name: 'mail_messages_total',
      help: 'Outgoing e-mail messages by outcome: sent, suppressed (every recipient on the suppression list), failed.',
      labelNames: ['outcome'] as const,
      registers,
    });
    this.#sns = new Counter({
      name: 'sns_notifications_total',
      help: 'Messages received at POST /webhooks/mailprovider/ by type (the SES event, or the SNS message type) and result.',
      labelNames: ['type', 'result'] as const,
      registers,
    });
    // Zero from the start, so that a rate is defined before the first event.
    for (const labels of Object.values(this.#refusalLabels)) this.#refusals.inc(labels, 0);
    for (const labels of Object.values(this.#deliveryLabels)) this.#deliveries.inc(labels, 0);
    for (const labels of Object.values(this.#mailLabels)) this.#mails.inc(labels, 0);
    queueGauges(ctx, registers);
    // The library's defaults sample the event-loop delay every 10 ms and its utilisation every 100 ms:
    // timers that wake an idle process 110 times a second, whether anyone scrapes it or not. Every
    // 50 ms and every second still catch any stall worth an alert (docs/operations.md).
    collectDefaultMetrics({
      register: this.registry,
      eventLoopMonitoringPrecision: 50,
      eventLoopUtilizationTimeout: 1000,
    });
  }

  /** The exposition (Prometheus text format) and its content type. */
  async exposition(): Promise<{ body: string; contentType: string }> {
    return { body: await this.registry.metrics(), contentType: this.registry.contentType };
  }

  /** The request-duration series of one route template (app.ts's routes, each made once). */
  routeDurations(route: string): RouteDurations {
    return this.#requestDurations.route(route);
  }

  /** Names the route of a request answered before routing (the OAuth server's paths, by template). */
  nameRoute(request: object, template: string): void {
    this.#named.set(request, template);
  }

  /** Records a request no Fastify route took: a named one under its template, else UNMATCHED_ROUTE. */
  observeUnrouted(request: object, method: string, status: number, seconds: number): void {
    const route = this.#named.get(request) ?? UNMATCHED_ROUTE;
    let series = this.#unrouted.get(route);
    if (!series) this.#unrouted.set(route, (series = this.routeDurations(route)));
    series.observe(method, status, seconds);
  }

  rateLimitRefused(limit: RefusalLimit): void {
    this.#refusals.inc(this.#refusalLabels[limit]);
  }

  /** One finished delivery attempt, as the delivery worker hands its result to the writer. */
  webhookAttempt(result: DeliveryAttempt): void {
    const outcome: DeliveryOutcome = result.ok
      ? 'success'
      : !result.attempted
        ? 'not_sent'
        : result.delivery.attempt >= this.#maxRetries
          ? 'dead_letter'
          : 'failed';
    this.#deliveries.inc(this.#deliveryLabels[outcome]);
    if (result.durationMs !== null) this.#deliveryDurations.observe(result.durationMs / 1000);
  }

  mail(outcome: MailOutcome): void {
    this.#mails.inc(this.#mailLabels[outcome]);
  }

  snsNotification(type: SnsType, result: SnsResult): void {
    let byResult = this.#snsLabels.get(type);
    if (!byResult) this.#snsLabels.set(type, (byResult = {}));
    this.#sns.inc((byResult[result] ??= { type, result }));
  }
}

/**
 * Turns metrics on for this app (once): ctx.metrics, and the throttle told of each refusal. Called by
 * buildApp when SERVICE_METRICS_TOKEN is set and by `svc worker` when SERVICE_WORKER_METRICS_PORT is.
 */
export function enableMetrics(ctx: AppContext): Metrics {
  if (ctx.metrics) return ctx.metrics;
  const metrics = new Metrics(ctx);
  ctx.metrics = metrics;
  ctx.throttle.onRefusal = (kind) => metrics.rateLimitRefused(kind);
  return metrics;
}
