// webhooks list|create|show|update|rotate-secret|test|deliveries|retry|delete (owner or admin).
import type { Webhook, WebhookDelivery, WebhookWithSecret } from 'svc-client';
import { list, str, type Command, type Context } from '../command.ts';
import { UsageError } from '../failures.ts';
import { printJson, printRecord, printTable } from '../io.ts';
import { teamId } from '../teams-lookup.ts';

const STATUSES = ['pending', 'success', 'failed', 'dead_letter'] as const;

function showWebhook(ctx: Context, webhook: Webhook | WebhookWithSecret) {
  if (ctx.json) return printJson(ctx.io, webhook);
  const secret = 'secret' in webhook ? webhook.secret : undefined;
  printRecord(ctx.io, [
    ['id', webhook.id],
    ['url', webhook.url],
    ['events', webhook.events.join(' ')],
    ['active', webhook.is_active],
    ...(webhook.disabled_at
      ? ([['disabled', `${webhook.disabled_at} (${webhook.disabled_reason ?? ''})`]] as [string, string][])
      : []),
    ...(secret !== undefined ? ([['secret', secret]] as [string, string][]) : []),
  ]);
  if (secret !== undefined) ctx.io.err('Keep the signing secret now: it is not shown again.');
}

function showDelivery(ctx: Context, entry: WebhookDelivery) {
  if (ctx.json) return printJson(ctx.io, entry);
  printRecord(ctx.io, [
    ['id', entry.id],
    ['event', `${entry.event_type} ${entry.event_id}`],
    ['attempt', entry.attempt],
    ['status', entry.status],
    ['next retry', entry.next_retry_at ?? '-'],
  ]);
}

/** The team's UUID and the subscription id from `TEAM WEBHOOK`. */
async function target(ctx: Context, positionals: string[]) {
  const { client } = ctx.session();
  return { client, team_id: await teamId(client, positionals[0]), id: positionals[1] };
}

export const webhookCommands: Command[] = [
  {
    path: ['webhooks', 'list'],
    usage: 'TEAM',
    summary: 'The webhook subscriptions of a team',
    args: { min: 1, max: 1 },
    async run(ctx, args) {
      const { client } = ctx.session();
      const team_id = await teamId(client, args.positionals[0]);
      const webhooks: Webhook[] = [];
      for await (const webhook of client.paginate('/api/v1/teams/{team_id}/webhooks/', {
        params: { path: { team_id } },
      }))
        webhooks.push(webhook);
      if (ctx.json) return printJson(ctx.io, webhooks);
      printTable(
        ctx.io,
        ['ID', 'URL', 'EVENTS', 'ACTIVE'],
        webhooks.map((w) => [w.id, w.url, w.events.join(' '), w.is_active]),
      );
    },
  },
  {
    path: ['webhooks', 'create'],
    usage: 'TEAM --url URL [--event EVENT]…',
    summary: 'Subscribe an https endpoint to events; prints the signing secret, once',
    options: {
      url: { type: 'string', help: 'the https URL to deliver to' },
      event: { type: 'string', multiple: true, help: 'an EVENT name; repeat for more (default: * for all)' },
    },
    args: { min: 1, max: 1 },
    async run(ctx, args) {
      const url = str(args, 'url');
      if (!url) throw new UsageError('--url is required');
      const events = list(args, 'event');
      const { client } = ctx.session();
      const team_id = await teamId(client, args.positionals[0]);
      showWebhook(
        ctx,
        await client.POST('/api/v1/teams/{team_id}/webhooks/', {
          params: { path: { team_id } },
          body: { url, events: events.length ? events : ['*'] },
        }),
      );
    },
  },
  {
    path: ['webhooks', 'show'],
    usage: 'TEAM WEBHOOK',
    summary: 'One subscription (WEBHOOK: its id)',
    args: { min: 2, max: 2 },
    async run(ctx, args) {
      const { client, team_id, id } = await target(ctx, args.positionals);
      showWebhook(
        ctx,
        await client.GET('/api/v1/teams/{team_id}/webhooks/{id}/', { params: { path: { team_id, id } } }),
      );
    },
  },
  {
    path: ['webhooks', 'update'],
    usage: 'TEAM WEBHOOK [--url URL] [--event EVENT]… [--enable | --disable]',
    summary: "Change a subscription's URL, events or whether it delivers",
    options: {
      url: { type: 'string', help: 'a new https URL' },
      event: { type: 'string', multiple: true, help: 'the new EVENT list; repeat for more' },
      enable: { type: 'boolean', help: 'deliver again (after fixing the endpoint)' },
      disable: { type: 'boolean', help: 'stop delivering, keep the subscription' },
    },
    args: { min: 2, max: 2 },
    async run(ctx, args) {
      if (args.values.enable && args.values.disable) throw new UsageError('--enable and --disable exclude each other');
      const url = str(args, 'url');
      const events = list(args, 'event');
      const body = {
        ...(url ? { url } : {}),
        ...(events.length ? { events } : {}),
        ...(args.values.enable ? { is_active: true } : args.values.disable ? { is_active: false } : {}),
      };
      if (Object.keys(body).length === 0)
        throw new UsageError('nothing to change: give --url, --event, --enable or --disable');
      const { client, team_id, id } = await target(ctx, args.positionals);
      showWebhook(
        ctx,
        await client.PATCH('/api/v1/teams/{team_id}/webhooks/{id}/', { params: { path: { team_id, id } }, body }),
      );
    },
  },
  {
    path: ['webhooks', 'rotate-secret'],
    usage: 'TEAM WEBHOOK',
    summary: 'A new signing secret (the old one keeps signing for the overlap); prints it once',
    args: { min: 2, max: 2 },
    async run(ctx, args) {
      const { client, team_id, id } = await target(ctx, args.positionals);
      showWebhook(
        ctx,
        await client.POST('/api/v1/teams/{team_id}/webhooks/{id}/rotate-secret/', {
          params: { path: { team_id, id } },
        }),
      );
    },
  },
  {
    path: ['webhooks', 'test'],
    usage: 'TEAM WEBHOOK [--event EVENT]',
    summary: 'Send a test event to the endpoint',
    options: { event: { type: 'string', help: "the EVENT type to send (default: the service's test event)" } },
    args: { min: 2, max: 2 },
    async run(ctx, args) {
      const event = str(args, 'event');
      const { client, team_id, id } = await target(ctx, args.positionals);
      showDelivery(
        ctx,
        await client.POST('/api/v1/teams/{team_id}/webhooks/{id}/test/', {
          params: { path: { team_id, id } },
          body: event ? { event_type: event } : {},
        }),
      );
    },
  },
  {
    path: ['webhooks', 'deliveries'],
    usage: 'TEAM WEBHOOK [--status STATUS] [--limit N]',
    summary: 'The delivery log, newest first',
    options: {
      status: { type: 'string', help: 'only this STATUS: pending, success, failed or dead_letter' },
      limit: { type: 'string', help: 'at most N entries (default 50; 0 for all)' },
    },
    args: { min: 2, max: 2 },
    async run(ctx, args) {
      const status = str(args, 'status');
      if (status !== undefined && !(STATUSES as readonly string[]).includes(status))
        throw new UsageError(`--status must be one of ${STATUSES.join(', ')}`);
      const limitText = str(args, 'limit') ?? '50';
      if (!/^\d+$/.test(limitText)) throw new UsageError('--limit must be a whole number');
      const limit = Number(limitText) || Infinity;
      const { client, team_id, id } = await target(ctx, args.positionals);
      const query = {
        ...(status ? { status: status as (typeof STATUSES)[number] } : {}),
        page_size: String(Math.min(limit, 200)),
      };
      const entries: WebhookDelivery[] = [];
      for await (const entry of client.paginate('/api/v1/teams/{team_id}/webhooks/{id}/logs/', {
        params: { path: { team_id, id }, query },
      })) {
        entries.push(entry);
        if (entries.length >= limit) break;
      }
      if (ctx.json) return printJson(ctx.io, entries);
      printTable(
        ctx.io,
        ['ID', 'EVENT', 'ATTEMPT', 'STATUS', 'CODE', 'MS', 'AT'],
        entries.map((e) => [e.id, e.event_type, e.attempt, e.status, e.status_code, e.duration_ms, e.created_at]),
      );
    },
  },
  {
    path: ['webhooks', 'retry'],
    usage: 'TEAM WEBHOOK DELIVERY',
    summary: 'Deliver a dead-lettered event again (DELIVERY: its log id)',
    args: { min: 3, max: 3 },
    async run(ctx, args) {
      const { client, team_id, id } = await target(ctx, args.positionals);
      showDelivery(
        ctx,
        await client.POST('/api/v1/teams/{team_id}/webhooks/{id}/logs/{log_id}/retry/', {
          params: { path: { team_id, id, log_id: args.positionals[2] } },
        }),
      );
    },
  },
  {
    path: ['webhooks', 'delete'],
    usage: 'TEAM WEBHOOK',
    summary: 'Delete a subscription',
    args: { min: 2, max: 2 },
    async run(ctx, args) {
      const { client, team_id, id } = await target(ctx, args.positionals);
      await client.DELETE('/api/v1/teams/{team_id}/webhooks/{id}/', { params: { path: { team_id, id } } });
      ctx.io.err(`Deleted webhook ${id}.`);
    },
  },
];
