// The one mailer of the application. Senders call queueMail() inside their own transaction: the message is an
// outbox row that exists exactly when the change that caused it is committed, and a slow mail server never
// slows an API call. The worker (mailWorkerTask) or sendQueuedMail() sends queued rows through the pre-send
// guard and the transport and records the outcome on the row: sent, suppressed or failed.
import { sql, type ExpressionBuilder } from 'kysely';
import type { AppContext } from '../app-context.ts';
import { purgeOlderThan } from '../db/batched-delete.ts';
import type { Database, Executor, Row } from '../db/schema.ts';
import { nowIso, isoAfter } from '../util/time.ts';
import { sleep, type WorkerTask } from '../worker/worker.ts';
import { asList } from './addresses.ts';
import { guardBatch, type GuardedRecipients } from './guard.ts';
import { mailLog } from './log.ts';
import { createTransport, linksIn, type MailTransport } from './transport.ts';

export interface OutgoingMail {
  to: string | string[];
  cc?: string | string[];
  bcc?: string | string[];
  subject: string;
  text: string;
  html?: string;
}

type OutboxRow = Row<'mail_outbox'>;

/** Rows claimed per round; their recipients are looked up in one guard query. */
const BATCH_SIZE = 25;
/**
 * A claimed row whose worker died is taken again after this long. It outlasts a whole batch at the SMTP
 * transport's worst case (25 × (10 s connect + 10 s greeting + 30 s socket)), so a slow batch is never sent twice.
 */
const LEASE_SECONDS = 1800;
const POLL_MS = 1000;
/** Finished rows (their bodies hold verification and reset links) are kept this long, then deleted. */
export const OUTBOX_RETENTION_DAYS = 30;
const PURGE_EVERY_MS = 3_600_000;
const MAX_ERROR_LENGTH = 1000;

/**
 * Records a message for sending, in the caller's transaction, and wakes the in-process sender. The
 * addresses are checked by the pre-send guard when sending, not here, so a suppression added between
 * queueing and sending still applies.
 */
export async function queueMail(ctx: Pick<AppContext, 'wake'>, trx: Executor, message: OutgoingMail): Promise<void> {
  const to = asList(message.to);
  const cc = asList(message.cc);
  const bcc = asList(message.bcc);
  // Programming errors, not user input: a message must have a recipient, a subject and a text part.
  if (to.length + cc.length + bcc.length === 0) throw new TypeError('queueMail: the message has no recipient');
  if (typeof message.subject !== 'string' || message.subject.trim() === '')
    throw new TypeError('queueMail: subject is required');
  if (typeof message.text !== 'string') throw new TypeError('queueMail: text is required');
  const now = nowIso();
  await trx
    .insertInto('mail_outbox')
    .values({
      to_addresses: JSON.stringify(to),
      cc_addresses: JSON.stringify(cc),
      bcc_addresses: JSON.stringify(bcc),
      // A header line break would let a subject inject headers; nodemailer folds, but never trust it twice.
      subject: message.subject.replace(/[\r\n]+/g, ' '),
      body_text: message.text,
      body_html: message.html ?? null,
      status: 'queued',
      created_at: now,
      updated_at: now,
    })
    .execute();
  // On SQLite the sender shares the one connection, so it sees the row only after the caller commits; on
  // PostgreSQL a wake that comes too early is covered by the 1 s poll.
  process.nextTick(() => ctx.wake.emit('mail'));
}

/** The app's transport (ctx.mail.transport), made on first use. */
function transportFor(ctx: AppContext): MailTransport {
  return (ctx.mail.transport ??= createTransport(ctx.config));
}

/** Takes up to BATCH_SIZE queued (or lease-expired) rows for this sender. */
async function claimBatch(ctx: AppContext): Promise<OutboxRow[]> {
  const now = nowIso();
  const db = ctx.db.kysely;
  const claimable = (eb: ExpressionBuilder<Database, 'mail_outbox'>) =>
    eb.or([eb('status', '=', 'queued'), eb.and([eb('status', '=', 'sending'), eb('locked_until', '<', now)])]);
  const candidates = db
    .selectFrom('mail_outbox')
    .select('id')
    .where(claimable)
    .orderBy('id')
    .limit(BATCH_SIZE)
    // Concurrent workers on PostgreSQL skip each other's rows instead of waiting; SQLite has one writer.
    .$if(ctx.db.dialect === 'postgres', (q) => q.forUpdate().skipLocked());
  const rows = await db
    .updateTable('mail_outbox')
    .set({ status: 'sending', locked_until: isoAfter(LEASE_SECONDS), updated_at: now })
    // PostgreSQL: the candidates as an array, computed once. As `id in (subquery)` the planner may run the
    // subquery once per row of a nested loop, and each run skips the rows this statement has already
    // updated, so the limit slides and one claim takes the whole queue (under a lease sized for one batch).
    .$if(ctx.db.dialect === 'postgres', (q) => q.where(sql<boolean>`"id" = any(array(${candidates}))`))
    .$if(ctx.db.dialect !== 'postgres', (q) => q.where('id', 'in', candidates))
    .where(claimable)
    .returningAll()
    .execute();
  return rows.sort((a, b) => a.id - b.id);
}

async function finish(
  ctx: AppContext,
  id: number,
  values: Partial<Pick<OutboxRow, 'status' | 'error' | 'suppressed_recipients' | 'transport_message_id' | 'sent_at'>>,
) {
  await ctx.db.kysely
    .updateTable('mail_outbox')
    .set({ ...values, locked_until: null, updated_at: nowIso() })
    .where('id', '=', id)
    .execute();
}

async function sendOne(ctx: AppContext, row: OutboxRow, guarded: GuardedRecipients): Promise<boolean> {
  const log = mailLog(ctx);
  const suppressed = JSON.stringify(guarded.suppressed);
  for (const address of guarded.suppressed) {
    log.warn(
      { mail_id: row.id, recipient: address, subject: row.subject },
      'mail recipient refused: address is suppressed',
    );
  }
  for (const value of guarded.invalid) {
    log.warn(
      { mail_id: row.id, recipient: value, subject: row.subject },
      'mail recipient refused: not a valid address',
    );
  }
  if (guarded.to.length + guarded.cc.length + guarded.bcc.length === 0) {
    const allSuppressed = guarded.suppressed.length > 0 && guarded.invalid.length === 0;
    log.warn({ mail_id: row.id, subject: row.subject }, 'mail dropped: no recipient left');
    await finish(ctx, row.id, {
      status: allSuppressed ? 'suppressed' : 'failed',
      error: allSuppressed ? null : 'no valid recipient address',
      suppressed_recipients: suppressed,
    });
    ctx.metrics?.mail(allSuppressed ? 'suppressed' : 'failed');
    return false;
  }
  const transport = transportFor(ctx);
  try {
    const result = await transport.send({
      id: row.id,
      from: ctx.config.emailFrom,
      to: guarded.to,
      cc: guarded.cc,
      bcc: guarded.bcc,
      subject: row.subject,
      text: row.body_text,
      html: row.body_html,
    });
    const rejected = result.rejected ?? [];
    if (rejected.length > 0) log.warn({ mail_id: row.id, rejected }, 'mail server refused some recipients');
    await finish(ctx, row.id, {
      status: 'sent',
      // Sent to the others; the refused ones are kept for the record.
      error:
        rejected.length > 0 ? `refused by the mail server: ${rejected.join(', ')}`.slice(0, MAX_ERROR_LENGTH) : null,
      suppressed_recipients: suppressed,
      transport_message_id: result.messageId,
      sent_at: nowIso(),
    });
    ctx.metrics?.mail('sent');
    if (transport.kind === 'file') {
      log.info(
        {
          mail_id: row.id,
          to: guarded.to.map((m) => m.address),
          subject: row.subject,
          links: linksIn(row.body_text),
          file: result.file,
        },
        'mail written',
      );
    } else {
      log.info({ mail_id: row.id, subject: row.subject, message_id: result.messageId }, 'mail sent');
    }
    return true;
  } catch (error) {
    const message = String((error as Error)?.message ?? error).slice(0, MAX_ERROR_LENGTH);
    log.error({ mail_id: row.id, subject: row.subject, err: message }, 'mail failed');
    ctx.metrics?.mail('failed');
    await finish(ctx, row.id, { status: 'failed', error: message, suppressed_recipients: suppressed });
    return false;
  }
}

/**
 * Sends every queued message now and returns how many were handed to the transport. Recipients refused by
 * the guard and transport failures are recorded on the rows, never thrown. Tests call this to flush mail.
 * When `signal` aborts (the worker stops), the message being sent is finished and the rest of the claimed
 * batch is handed back to the queue at once, for the next worker, instead of waiting out its lease.
 */
export async function sendQueuedMail(ctx: AppContext, signal?: AbortSignal): Promise<number> {
  let sent = 0;
  while (!signal?.aborted) {
    const rows = await claimBatch(ctx);
    if (rows.length === 0) break;
    const guarded = await guardBatch(
      ctx.db.kysely,
      rows.map((row) => ({
        to: JSON.parse(row.to_addresses) as string[],
        cc: JSON.parse(row.cc_addresses) as string[],
        bcc: JSON.parse(row.bcc_addresses) as string[],
      })),
    );
    for (let i = 0; i < rows.length; i++) {
      if (signal?.aborted) {
        await release(ctx, rows.slice(i));
        return sent;
      }
      if (await sendOne(ctx, rows[i], guarded[i])) sent++;
    }
    if (rows.length < BATCH_SIZE) break;
  }
  return sent;
}

/** Hands claimed rows that were not sent back to the queue. */
async function release(ctx: AppContext, rows: readonly OutboxRow[]) {
  await ctx.db.kysely
    .updateTable('mail_outbox')
    .set({ status: 'queued', locked_until: null, updated_at: nowIso() })
    .where(
      'id',
      'in',
      rows.map((row) => row.id),
    )
    .where('status', '=', 'sending')
    .execute();
}

// Sent, suppressed or failed: the predicate of mail_outbox_finished_idx (migration 0014), as it states it.
const FINISHED = sql`"status" <> 'queued' and "status" <> 'sending'`;

/** Deletes sent, suppressed and failed rows last touched more than `days` ago, in batches; returns how many. */
export function purgeOldMail(ctx: AppContext, days = OUTBOX_RETENTION_DAYS): Promise<number> {
  return purgeOlderThan(ctx.db.kysely, 'mail_outbox', 'updated_at', isoAfter(-days * 86_400), {
    also: FINISHED,
  });
}

/** The worker's mail sender: runs at once on a 'mail' wake-up, else every second; purges hourly. */
export const mailWorkerTask: WorkerTask = {
  name: 'mail',
  async run(ctx, signal) {
    let woken = false;
    const onWake = () => {
      woken = true;
    };
    ctx.wake.on('mail', onWake);
    let lastPurge = 0;
    try {
      while (!signal.aborted) {
        woken = false;
        try {
          if (Date.now() - lastPurge > PURGE_EVERY_MS) {
            lastPurge = Date.now();
            await purgeOldMail(ctx);
          }
          await sendQueuedMail(ctx, signal);
        } catch (error) {
          // A database hiccup: logged, and the next round tries again (rows keep their state).
          mailLog(ctx).error({ err: error }, 'mail sender round failed');
        }
        if (!woken) await sleep(POLL_MS, signal, ctx.wake, 'mail');
      }
    } finally {
      ctx.wake.off('mail', onWake);
      ctx.mail.transport?.close();
      ctx.mail.transport = null;
    }
  },
};
