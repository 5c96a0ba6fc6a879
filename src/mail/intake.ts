// `POST /webhooks/mailprovider/`: Amazon SES events delivered by an SNS HTTPS subscription. No credential,
// no session, no CSRF: the SNS signature is the authentication. Routed only when
// SERVICE_MAILPROVIDER_WEBHOOK_ENABLED is true. Order of checks: bounds and shape (413, 400), then every check
// that needs no network (signature version, URLs, topic: 403), then the certificate (403, or 500 when the
// fetch failed for a transient reason so SNS retries), the signature (403), and only then the content.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { AppContext } from '../app-context.ts';
import type { SnsResult } from '../metrics/metrics.ts';
import { HttpProblem } from '../http/problem.ts';
import { IntakeStore } from './intake-store.ts';
import { mailLog } from './log.ts';
import { readSesEvent, TooManyRecipients } from './ses-events.ts';
import { CertificateRefused, FETCH_TIMEOUT_MS, SnsCertificateStore } from './sns-certificates.ts';
import { FetchRefused, FetchTransient, boundedGet, type FetchAgents } from './sns-fetch.ts';
import {
  EnvelopeInvalid,
  isSupportedSignatureVersion,
  parseEnvelope,
  signatureIsValid,
  type SnsMessage,
} from './sns-message.ts';
import { isValidSigningCertUrl, isValidSubscribeUrl } from './sns-urls.ts';

export const INTAKE_PATH = '/webhooks/mailprovider/';
/** SNS messages are at most 256 KiB; twice that leaves room for the envelope and JSON escaping. */
export const INTAKE_BODY_LIMIT = 512 * 1024;
const SUBSCRIBE_MAX_BYTES = 64 * 1024;
/** The metrics' type of a message that is not a notification (a notification's is its SES event). */
const SNS_TYPES: Record<SnsMessage['Type'], string> = {
  Notification: 'notification',
  SubscriptionConfirmation: 'subscription_confirmation',
  UnsubscribeConfirmation: 'unsubscribe_confirmation',
};

/** What the intake reaches the network with. Tests replace the agents to reach a local stand-in. */
export interface IntakeNetwork {
  agents: FetchAgents;
  /** Deadline of each fetch (certificate, intermediate, SubscribeURL). */
  timeoutMs: number;
}

/** The network settings of one app (ctx.mail.intake, made on first use); tests set `agents` on it. */
export function intakeNetwork(ctx: Pick<AppContext, 'mail'>): IntakeNetwork {
  return (ctx.mail.intake ??= { agents: {}, timeoutMs: FETCH_TIMEOUT_MS });
}

const refuse = (log: Logger, message: SnsMessage | null, reason: string): never => {
  log.warn({ sns_message_id: message?.MessageId, topic: message?.TopicArn, reason }, 'mail-provider message refused');
  throw new HttpProblem(403, 'The message was refused.');
};

function networkFailure(log: Logger, message: SnsMessage, error: unknown, what: string): never {
  if (error instanceof FetchTransient) {
    log.error({ sns_message_id: message.MessageId, reason: error.message }, `${what} failed, SNS will retry`);
    throw new HttpProblem(500, `The ${what} failed; try again later.`);
  }
  if (error instanceof FetchRefused || error instanceof CertificateRefused)
    refuse(log, message, `${what}: ${error.message}`);
  throw error;
}

export async function registerMailproviderIntake(app: FastifyInstance, ctx: AppContext) {
  const { config } = ctx;
  if (!config.mailproviderWebhookEnabled) return;
  if (!config.mailproviderTopicArn) {
    mailLog(ctx).warn(
      'SERVICE_MAILPROVIDER_TOPIC_ARN is not set: mail-provider messages from any SNS topic are accepted (set it before subscribing)',
    );
  }
  const network = intakeNetwork(ctx);
  const certificates = new SnsCertificateStore({
    trustAnchorsFile: config.mailproviderTrustAnchorsFile,
    network: () => network,
  });
  const store = new IntakeStore(ctx.db.kysely);

  /** Checks and records one message; `seen.type` follows what is known of it (for the metrics). */
  async function receive(
    request: FastifyRequest,
    seen: { type: string },
  ): Promise<{ result: SnsResult; status: string }> {
    const log = mailLog(ctx);
    let parsed: unknown;
    try {
      parsed = JSON.parse(typeof request.body === 'string' ? request.body : '');
    } catch {
      throw new HttpProblem(400, 'Request body is not valid JSON.');
    }
    let message: SnsMessage;
    try {
      message = parseEnvelope(parsed);
    } catch (error) {
      if (error instanceof EnvelopeInvalid) throw new HttpProblem(400, error.message);
      throw error;
    }
    seen.type = SNS_TYPES[message.Type];

    // Checks that need no network first: nothing is fetched for a message refused here.
    if (!isSupportedSignatureVersion(message.SignatureVersion))
      refuse(log, message, `SignatureVersion ${message.SignatureVersion.slice(0, 8)}`);
    if (!isValidSigningCertUrl(message.SigningCertURL))
      refuse(log, message, `SigningCertURL ${message.SigningCertURL.slice(0, 200)}`);
    if (message.Type !== 'Notification' && !isValidSubscribeUrl(message.SubscribeURL!)) {
      refuse(log, message, `SubscribeURL ${message.SubscribeURL!.slice(0, 200)}`);
    }
    if (config.mailproviderTopicArn && message.TopicArn !== config.mailproviderTopicArn)
      refuse(log, message, `topic ${message.TopicArn.slice(0, 200)}`);

    let key;
    try {
      key = await certificates.publicKeyFor(message.SigningCertURL);
    } catch (error) {
      networkFailure(log, message, error, 'signing certificate fetch');
    }
    if (!signatureIsValid(message, key!)) refuse(log, message, 'bad signature');

    if (message.Type === 'SubscriptionConfirmation') {
      try {
        await boundedGet(message.SubscribeURL!, {
          agents: network.agents,
          timeoutMs: network.timeoutMs,
          maxBytes: SUBSCRIBE_MAX_BYTES,
        });
      } catch (error) {
        networkFailure(log, message, error, 'subscription confirmation');
      }
      log.info({ topic: message.TopicArn }, 'mail-provider subscription confirmed');
      return { result: 'confirmed', status: 'confirmed' };
    }
    if (message.Type === 'UnsubscribeConfirmation') {
      log.warn({ topic: message.TopicArn }, 'mail-provider subscription ended (UnsubscribeConfirmation received)');
      return { result: 'acknowledged', status: 'ok' };
    }

    let inner: unknown;
    try {
      inner = JSON.parse(message.Message);
    } catch {
      inner = null;
    }
    if (typeof inner !== 'object' || inner === null || Array.isArray(inner)) {
      log.warn(
        { sns_message_id: message.MessageId },
        'mail-provider notification ignored: Message is not a JSON object',
      );
      return { result: 'ignored', status: 'ignored' };
    }
    let events;
    try {
      events = readSesEvent(
        inner as Record<string, unknown>,
        new Date(Date.parse(message.Timestamp) || Date.now()).toISOString(),
      );
    } catch (error) {
      if (error instanceof TooManyRecipients) refuse(log, message, error.message);
      throw error;
    }
    seen.type = events![0].eventType;
    const stored = await store.store({ messageId: message.MessageId, topicArn: message.TopicArn }, events!);
    const inserted = stored.filter((s) => s.inserted).length;
    for (const entry of stored) {
      if (entry.suppression === 'suppressed')
        log.warn({ email: entry.email, event_key: entry.key }, 'address suppressed');
      if (entry.suppression === 'predates_release')
        log.info(
          { email: entry.email, event_key: entry.key },
          'event predates the release of the address: not suppressed again',
        );
    }
    // What was recorded goes on the request's own log line (one line per request on this hot path).
    // (Fastify's logger type omits setBindings; the app's request logger is pino, which has it.)
    (request.log as Partial<Logger>).setBindings?.({
      sns_message_id: message.MessageId,
      sns_event: events![0].eventType,
      recipients: stored.length,
      inserted,
    });
    return inserted === 0 ? { result: 'duplicate', status: 'duplicate' } : { result: 'recorded', status: 'recorded' };
  }

  // An encapsulated plugin: its own body limit and content-type parsing apply to this route only. SNS posts
  // JSON as text/plain, so the body is read as text whatever the content type says and parsed here.
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit: INTAKE_BODY_LIMIT }, (_request, body, done) =>
      done(null, body),
    );
    scope.post(
      INTAKE_PATH,
      { bodyLimit: INTAKE_BODY_LIMIT, schema: { hide: true } },
      async (request: FastifyRequest, reply: FastifyReply) => {
        const seen = { type: 'unknown' };
        try {
          const { result, status } = await receive(request, seen);
          ctx.metrics?.snsNotification(seen.type, result);
          return reply.send({ status });
        } catch (error) {
          ctx.metrics?.snsNotification(
            seen.type,
            error instanceof HttpProblem && error.status < 500
              ? error.status === 400
                ? 'invalid'
                : 'refused'
              : 'failed',
          );
          throw error;
        }
      },
    );
  });
}
