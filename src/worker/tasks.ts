// Every background task the worker runs. Capabilities append theirs here.
import { mailWorkerTask } from '../mail/outbox.ts';
import { webhookDeliveryTask, webhookLogPurgeTask } from '../webhooks/delivery-worker.ts';
import { idempotencyPurgeTask } from '../http/idempotency-task.ts';
import { accountsPurgeTask } from '../accounts/housekeeping.ts';
import { oauthPurgeTask } from '../oauth/purge-task.ts';
import { auditPurgeTask } from '../audit/purge-task.ts';
import type { WorkerTask } from './worker.ts';

export const WORKER_TASKS: WorkerTask[] = [mailWorkerTask, webhookDeliveryTask(), webhookLogPurgeTask, idempotencyPurgeTask, accountsPurgeTask, oauthPurgeTask, auditPurgeTask];
