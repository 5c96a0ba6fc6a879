// /teams/<team_id>/webhooks/: the team's subscriptions (URL, events, active or disabled and why) and
// "Create webhook" (URL, Events: a checkbox per registered event type, or all). Creating goes
// through createSubscription (the URL rules, the SSRF guard, the per-team cap) as the API does; the
// new signing secret is shown once on the subscription's page that follows.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../app-context.ts';
import { requestActor } from '../audit/actor.ts';
import { attempt } from '../web/refusals.ts';
import { formList, formString } from '../web/forms.ts';
import { setOnce } from '../web/once.ts';
import { renderPage, seeOther } from '../web/render.ts';
import { EVENT_TYPES } from '../events/index.ts';
import { webhookTeam, type WebhookPageContext } from './page-access.ts';
import type { AddressGuard } from './ssrf.ts';
import { createSubscription, listSubscriptions, subscriptionView } from './subscriptions.ts';

export interface EventsForm {
  url: string;
  events: string[];
}

/** The registry as checkboxes: every event type with its description. */
export const eventChoices = () => Object.entries(EVENT_TYPES).map(([name, description]) => ({ name, description }));

/** The Events checkboxes as the service takes them: "*" alone when "All events" is ticked. */
export function eventsOf(request: FastifyRequest): string[] {
  const events = [...new Set(formList(request, 'events'))];
  return events.includes('*') ? ['*'] : events;
}

export const NO_EVENTS = 'Choose at least one event type, or all events.';

/** What the secret's page shows once after a create or a rotation (web/once.ts). */
export interface ShownSecret {
  secret: string;
  rotated: boolean;
}

export function registerWebhookListPage(pages: FastifyInstance, ctx: AppContext, guard: AddressGuard) {
  const db = ctx.db.kysely;

  async function show(
    reply: FastifyReply,
    access: WebhookPageContext,
    extra: { form?: EventsForm; error?: string; status?: number } = {},
  ) {
    const { rows } = await listSubscriptions(db, access.team.id, 1000, 0);
    return renderPage(
      reply,
      'webhooks/views/webhooks',
      {
        title: `Webhooks of ${access.team.name}`,
        team: access.team,
        base: access.base,
        webhooks: access.webhooks,
        subscriptions: rows.map(subscriptionView),
        choices: eventChoices(),
        form: extra.form ?? { url: '', events: [] },
        cap: ctx.config.webhooks.maxSubscriptionsPerTeam,
        error: extra.error ?? null,
      },
      { status: extra.status ?? 200 },
    );
  }

  pages.get('/teams/:team_id/webhooks/', async (request, reply) => show(reply, await webhookTeam(ctx, request)));

  pages.post('/teams/:team_id/webhooks/', async (request, reply) => {
    const access = await webhookTeam(ctx, request);
    const form: EventsForm = { url: formString(request, 'url', { max: 2048 }), events: eventsOf(request) };
    if (form.events.length === 0) return show(reply, access, { form, error: NO_EVENTS, status: 400 });
    const created = await attempt(() =>
      createSubscription(ctx, guard, access.team.id, form, requestActor(request, ctx.clientAddresses)),
    );
    if (!created.ok) return show(reply, access, { form, error: created.message, status: created.status });
    const path = `${access.webhooks}${created.value.row.id}/`;
    setOnce(reply, path, { secret: created.value.secret, rotated: false } satisfies ShownSecret);
    return seeOther(reply, path);
  });
}
