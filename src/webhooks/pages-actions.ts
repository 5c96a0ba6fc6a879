// The webhook page's buttons that do more than edit: "Rotate secret" and "Delete" (a recent
// re-authentication first, as creating a token needs), "Send test event", and "Retry" on a log
// entry. Each calls the service the API calls; a refusal is shown on the webhook's page.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppContext } from '../app-context.ts';
import { requestActor } from '../audit/actor.ts';
import { hasRecentReauth, redirectToReauth } from '../accounts/session-auth.ts';
import { attempt } from '../web/refusals.ts';
import { formString } from '../web/forms.ts';
import { setOnce } from '../web/once.ts';
import { seeOther, setNotice } from '../web/render.ts';
import { retryDelivery, sendTestEvent } from './manual-delivery.ts';
import { webhookSubscription } from './page-access.ts';
import type { ShownSecret } from './pages-list.ts';
import { showSubscriptionPage } from './pages-subscription.ts';
import { deleteSubscription, rotateSecret } from './subscriptions.ts';

export function registerWebhookActions(pages: FastifyInstance, ctx: AppContext) {
  const base = '/teams/:team_id/webhooks/:id/';
  const recent = (request: FastifyRequest) => hasRecentReauth(request, ctx.config.accounts.reauthMaxAgeSeconds);

  pages.post(`${base}rotate-secret/`, async (request, reply) => {
    const access = await webhookSubscription(ctx, request);
    // Someone holding a stolen session must not be able to take over the team's signing secret.
    if (!recent(request)) return redirectToReauth(reply, access.path);
    const { secret } = await rotateSecret(ctx, access.row, requestActor(request, ctx.clientAddresses));
    setOnce(reply, access.path, { secret, rotated: true } satisfies ShownSecret);
    return seeOther(reply, access.path);
  });

  pages.post(`${base}delete/`, async (request, reply) => {
    const access = await webhookSubscription(ctx, request);
    if (!recent(request)) return redirectToReauth(reply, access.path);
    await deleteSubscription(ctx.db.kysely, access.row, requestActor(request, ctx.clientAddresses));
    setNotice(reply, `The webhook to ${access.row.url} has been deleted; its pending deliveries will not be sent.`);
    return seeOther(reply, access.webhooks);
  });

  pages.post(`${base}test/`, async (request, reply) => {
    const access = await webhookSubscription(ctx, request);
    const type = formString(request, 'event_type', { max: 200 });
    const sent = await attempt(() => sendTestEvent(ctx, access.row, type || undefined));
    if (!sent.ok) return showSubscriptionPage(reply, ctx, access, { error: sent.message, status: sent.status });
    setNotice(
      reply,
      `A test ${sent.value.type} event (${sent.value.eventId}) is on its way; its delivery appears in the log below.`,
    );
    return seeOther(reply, access.path);
  });

  pages.post(`${base}deliveries/:log_id/retry/`, async (request, reply) => {
    const access = await webhookSubscription(ctx, request);
    const { log_id: logId } = request.params as { log_id: string };
    if (!/^\d{1,15}$/.test(logId))
      return showSubscriptionPage(reply, ctx, access, {
        error: 'No entry of this delivery log has that id.',
        status: 404,
      });
    const retried = await attempt(() =>
      retryDelivery(ctx, access.row, Number(logId), requestActor(request, ctx.clientAddresses)),
    );
    if (!retried.ok)
      return showSubscriptionPage(reply, ctx, access, { error: retried.message, status: retried.status });
    setNotice(
      reply,
      retried.value === 'restarted'
        ? 'The event is being delivered again, from attempt 1.'
        : 'The next attempt is being made now instead of after its wait.',
    );
    return seeOther(reply, access.path);
  });
}
