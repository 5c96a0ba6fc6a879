// /teams/<team_id>/webhooks/<id>/: one subscription. Its secret once after a create or rotation,
// the 24-hour chart, the delivery log (filter by status, "Retry"), "Send test event", the edit form
// (URL, Events, "Save"), enable/disable, and "Rotate secret" / "Delete" (pages-actions.ts), which
// need a recent re-authentication as creating a token does.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../app-context.ts';
import { requestActor } from '../audit/actor.ts';
import { minuteUtc } from '../web/format.ts';
import { attempt } from '../web/refusals.ts';
import type { DeliveryStatus } from './queue.ts';
import { HttpProblem } from '../http/problem.ts';
import { formString } from '../web/forms.ts';
import { takeOnce } from '../web/once.ts';
import { renderPage, seeOther, setNotice } from '../web/render.ts';
import { OUTCOME_STYLE, deliveryChartSvg, summary } from './delivery-chart.ts';
import { LOG_STATUSES, deliveryLogPage, hourlyOutcomes } from './delivery-log.ts';
import { EVENT_NAMES } from '../events/index.ts';
import { webhookSubscription, type SubscriptionPageContext } from './page-access.ts';
import { NO_EVENTS, eventChoices, eventsOf, type EventsForm, type ShownSecret } from './pages-list.ts';
import type { AddressGuard } from './ssrf.ts';
import { subscriptionView, updateSubscription } from './subscriptions.ts';

export interface SubscriptionPageExtra {
  error?: string;
  status?: number;
  form?: EventsForm;
  secret?: ShownSecret | null;
}

/** The ?status= filter: one of the log's statuses, or null for all; anything else is a 400. */
function statusFilter(request: FastifyRequest): DeliveryStatus | null {
  const value = (request.query as Record<string, unknown>).status;
  if (value === undefined || value === '') return null;
  if (typeof value === 'string' && (LOG_STATUSES as readonly string[]).includes(value)) return value as DeliveryStatus;
  throw new HttpProblem(400, `Unknown status; choose one of ${LOG_STATUSES.join(', ')}.`);
}

export async function showSubscriptionPage(
  reply: FastifyReply,
  ctx: AppContext,
  access: SubscriptionPageContext,
  extra: SubscriptionPageExtra = {},
) {
  const request = reply.request;
  const db = ctx.db.kysely;
  const view = subscriptionView(access.row);
  // A form post re-rendered with its refusal shows the log's first page, unfiltered, with page
  // links to this page (the cursor links are made from the request's path and query).
  const get = request.method === 'GET';
  const status = get ? statusFilter(request) : null;
  const logRequest = get ? request : ({ url: access.path, query: {} } as unknown as FastifyRequest);
  const log = await deliveryLogPage(db, ctx.config, logRequest, access.row.id, status);
  const hours = await hourlyOutcomes(db, access.row.id);
  const receives = view.events[0] === '*' ? EVENT_NAMES : view.events;
  const minutes = Math.round(ctx.config.accounts.reauthMaxAgeSeconds / 60);
  return renderPage(
    reply,
    'webhooks/views/webhook',
    {
      title: 'Webhook',
      team: access.team,
      webhooks: access.webhooks,
      path: access.path,
      subscription: { ...view, created: minuteUtc(view.created_at), disabled: minuteUtc(view.disabled_at, '') },
      secret: extra.secret ?? null,
      overlapHours: ctx.config.webhooks.secretOverlapHours,
      chart: deliveryChartSvg(hours),
      chartSummary: summary(hours),
      legend: Object.entries(OUTCOME_STYLE).map(([outcome, style]) => ({ outcome, label: style.label })),
      entries: log.entries.map((entry) => ({
        ...entry,
        time: minuteUtc(entry.created_at),
        next: minuteUtc(entry.next_retry_at, ''),
      })),
      olderPage: log.next,
      newerPage: log.previous,
      statuses: LOG_STATUSES,
      status,
      receives,
      choices: eventChoices(),
      form: extra.form ?? { url: view.url, events: view.events },
      reauthMinutes: minutes,
      error: extra.error ?? null,
    },
    { status: extra.status ?? 200 },
  );
}

export function registerSubscriptionPage(pages: FastifyInstance, ctx: AppContext, guard: AddressGuard) {
  const db = ctx.db.kysely;
  const base = '/teams/:team_id/webhooks/:id/';

  pages.get(base, async (request, reply) => {
    const access = await webhookSubscription(ctx, request);
    return showSubscriptionPage(reply, ctx, access, { secret: takeOnce<ShownSecret>(request, reply, access.path) });
  });

  pages.post(base, async (request, reply) => {
    const access = await webhookSubscription(ctx, request);
    const form: EventsForm = { url: formString(request, 'url', { max: 2048 }), events: eventsOf(request) };
    if (form.events.length === 0)
      return showSubscriptionPage(reply, ctx, access, { form, error: NO_EVENTS, status: 400 });
    const saved = await attempt(() =>
      updateSubscription(db, guard, access.row, form, ctx.config.baseUrl, requestActor(request, ctx.clientAddresses)),
    );
    if (!saved.ok)
      return showSubscriptionPage(reply, ctx, access, { form, error: saved.message, status: saved.status });
    setNotice(reply, 'The webhook has been saved.');
    return seeOther(reply, access.path);
  });

  for (const [action, active] of [
    ['enable', true],
    ['disable', false],
  ] as const) {
    pages.post(`${base}${action}/`, async (request, reply) => {
      const access = await webhookSubscription(ctx, request);
      await updateSubscription(
        db,
        guard,
        access.row,
        { is_active: active },
        ctx.config.baseUrl,
        requestActor(request, ctx.clientAddresses),
      );
      setNotice(
        reply,
        active
          ? 'The webhook is enabled: new events are delivered to it again.'
          : 'The webhook is disabled: it receives no events until it is enabled.',
      );
      return seeOther(reply, access.path);
    });
  }
}
