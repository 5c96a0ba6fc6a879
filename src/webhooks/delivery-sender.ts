// One attempt of one delivery: the signed POST and what came of it. A row whose subscription or
// team is inactive (or gone) is not sent; its result says why, and it is dead-lettered unsent.
import { performance } from 'node:perf_hooks';
import type { AppContext } from '../app-context.ts';
import { nowIso } from '../util/time.ts';
import type { DeliverySigner, Signature } from './delivery-signer.ts';
import { DeliveryClient, USER_AGENT, describeFailure } from './http-client.ts';
import type { AttemptResult, ClaimedDelivery, DeliveryTarget } from './queue.ts';
import { retryAfterSeconds } from './retry-after.ts';
import { AddressGuard } from './ssrf.ts';

/** Whether an attempt would be sent (it is dead-lettered unsent otherwise): worth signing ahead. */
export function isSendable(target: DeliveryTarget): boolean {
  return target.subscription_active === 1 && target.team_active === 1;
}

export class DeliverySender {
  readonly #client: DeliveryClient;
  readonly #signer: DeliverySigner;
  readonly #urls = new Map<string, URL>();

  /** `ca`: extra CA certificates to trust (tests with a private CA). */
  constructor(
    settings: AppContext['config']['webhooks'],
    signer: DeliverySigner,
    ca?: string | Buffer | Array<string | Buffer>,
  ) {
    this.#client = new DeliveryClient({ guard: new AddressGuard(settings), timeoutMs: settings.deliveryTimeoutMs, ca });
    this.#signer = signer;
  }

  /** Sends one attempt (signed with `presigned` while it is fresh); never rejects. */
  async attempt(
    delivery: ClaimedDelivery,
    target: DeliveryTarget | undefined,
    presigned: Signature | null,
  ): Promise<AttemptResult> {
    const attemptedAt = nowIso();
    const base = { delivery, attemptedAt };
    if (!target || !isSendable(target)) {
      const why = !target
        ? 'the subscription was deleted'
        : target.subscription_active !== 1
          ? 'the subscription is inactive'
          : 'the team is inactive';
      return {
        ...base,
        attempted: false,
        ok: false,
        statusCode: null,
        durationMs: null,
        responseBody: `Not sent: ${why}.`,
      };
    }
    const started = performance.now();
    let statusCode: number | null = null;
    let responseBody: string | null;
    let retryAfter: number | null = null;
    try {
      const signature = this.#signer.current(target, delivery.event_id, delivery.payload, presigned);
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        'x-service-event': delivery.event_type,
        'x-service-event-id': delivery.event_id,
        'x-service-attempt': String(delivery.attempt),
        'x-service-signature': signature.header,
      };
      if (signature.standard !== null) {
        headers['webhook-id'] = delivery.event_id;
        headers['webhook-timestamp'] = String(signature.timestamp);
        headers['webhook-signature'] = signature.standard;
      }
      const response = await this.#client.post(this.#parsed(target.url), headers, delivery.payload);
      statusCode = response.statusCode;
      responseBody = response.body;
      if (response.retryAfter !== undefined && statusCode !== null)
        retryAfter = retryAfterSeconds(statusCode, response.retryAfter, Date.now());
    } catch (error) {
      responseBody = describeFailure(error);
    }
    const ok = statusCode !== null && statusCode >= 200 && statusCode < 300;
    return {
      ...base,
      attempted: true,
      ok,
      statusCode,
      responseBody,
      durationMs: Math.round(performance.now() - started),
      retryAfterSeconds: retryAfter,
    };
  }

  close(): Promise<void> {
    return this.#client.close();
  }

  /** Parsed once per URL, not per attempt (a subscription's URL rarely changes). */
  #parsed(url: string): URL {
    let parsed = this.#urls.get(url);
    if (!parsed) {
      if (this.#urls.size >= 1000) this.#urls.clear();
      parsed = new URL(url);
      this.#urls.set(url, parsed);
    }
    return parsed;
  }
}
