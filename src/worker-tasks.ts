// Every background task the worker runs, one per line, as app.ts lists every feature's routes: the
// worker loop (worker/) imports no feature, and each feature defines its own tasks. The order is
// the order `svc worker` names them in.
import { accountsPurgeTask } from './accounts/housekeeping.ts';
import { auditPurgeTask } from './audit/purge-task.ts';
import { idempotencyPurgeTask } from './http/idempotency-task.ts';
import { mailEventsPurgeTask } from './mail/events-purge.ts';
import { mailWorkerTask } from './mail/outbox.ts';
import { oauthPurgeTask } from './oauth/purge-task.ts';
import { webhookDeliveryTask } from './webhooks/delivery-worker.ts';
import { webhookLogPurgeTask } from './webhooks/log-purge.ts';
import type { WorkerTask } from './worker/worker.ts';

export const WORKER_TASKS: WorkerTask[] = [
  mailWorkerTask,
  webhookDeliveryTask(),
  webhookLogPurgeTask,
  idempotencyPurgeTask,
  accountsPurgeTask,
  oauthPurgeTask,
  auditPurgeTask,
  mailEventsPurgeTask,
];
