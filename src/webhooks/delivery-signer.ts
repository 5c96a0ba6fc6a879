// The one place a delivery is signed: X-Service-Signature over the exact body, with the
// subscription's current secret and, during a rotation's overlap window, its previous one too, and,
// unless the subscription turned them off, the Standard Webhooks signature with the same secrets
// and timestamp (one more HMAC per secret; its keys are derived only for subscriptions that use it).
import { decryptSecret } from '../util/encryption.ts';
import { hmacKey, signatureHeader, standardSignatureHeader, type HmacKey } from './signing.ts';
import { secretContext } from './subscriptions.ts';
import type { DeliveryTarget } from './queue.ts';

/** A signature, and when (ms) it was made. */
export interface Signature {
  /** X-Service-Signature. */
  header: string;
  /** webhook-signature; null when the subscription turned the Standard Webhooks headers off. */
  standard: string | null;
  /** Unix seconds: `t=` and webhook-timestamp. */
  timestamp: number;
  at: number;
}

/**
 * A signature made at claim time is sent if at most this old; an older one (its row waited long in
 * the buffer) is made again at the attempt. Its `t` is then at most this far behind the sending
 * time, well inside the 5 minutes receivers tolerate.
 */
const MAX_SIGNATURE_AGE_MS = 5_000;
const MAX_CACHED_SUBSCRIPTIONS = 10_000;

type SigningTarget = Pick<
  DeliveryTarget,
  'id' | 'secret_encrypted' | 'previous_secret_encrypted' | 'previous_secret_expires_at' | 'standard_webhooks'
>;

interface SigningKeys {
  current: string;
  previous: string | null;
  /** The decrypted secrets, newest first. */
  secrets: string[];
  keys: HmacKey[];
  /** The Standard Webhooks keys, derived on first use. */
  standardKeys: HmacKey[] | null;
  previousUntil: number;
}

export class DeliverySigner {
  readonly #secretKey: string;
  /** By subscription: its secrets decrypted once, until a rotation changes the encrypted values. */
  readonly #keys = new Map<string, SigningKeys>();

  constructor(secretKey: string) {
    this.#secretKey = secretKey;
  }

  /** Signs `payload` of event `eventId` as sent at `now` (ms). */
  sign(target: SigningTarget, eventId: string, payload: string, now = Date.now()): Signature {
    const entry = this.#entryOf(target);
    const count = entry.keys.length > 1 && now >= entry.previousUntil ? 1 : entry.keys.length;
    const timestamp = Math.floor(now / 1000);
    const header = signatureHeader(
      count < entry.keys.length ? entry.keys.slice(0, count) : entry.keys,
      timestamp,
      payload,
    );
    let standard: string | null = null;
    if (target.standard_webhooks === 1) {
      entry.standardKeys ??= entry.secrets.map((secret) => hmacKey(secret, 'base64'));
      standard = standardSignatureHeader(
        count < entry.keys.length ? entry.standardKeys.slice(0, count) : entry.standardKeys,
        eventId,
        timestamp,
        payload,
      );
    }
    return { header, standard, timestamp, at: now };
  }

  /** The signature to send now: `presigned` while it is fresh, else a new one. */
  current(target: SigningTarget, eventId: string, payload: string, presigned: Signature | null): Signature {
    const now = Date.now();
    return presigned && now - presigned.at <= MAX_SIGNATURE_AGE_MS
      ? presigned
      : this.sign(target, eventId, payload, now);
  }

  /** The subscription's keys, newest first (sign() drops the previous secret once its overlap ends). */
  #entryOf(target: SigningTarget): SigningKeys {
    let entry = this.#keys.get(target.id);
    if (!entry || entry.current !== target.secret_encrypted || entry.previous !== target.previous_secret_encrypted) {
      const decrypt = (encrypted: string) => decryptSecret(this.#secretKey, encrypted, secretContext(target.id));
      const secrets = [decrypt(target.secret_encrypted)];
      if (target.previous_secret_encrypted) secrets.push(decrypt(target.previous_secret_encrypted));
      entry = {
        current: target.secret_encrypted,
        previous: target.previous_secret_encrypted,
        secrets,
        keys: secrets.map((secret) => hmacKey(secret)),
        standardKeys: null,
        previousUntil: target.previous_secret_expires_at ? Date.parse(target.previous_secret_expires_at) : 0,
      };
      if (this.#keys.size >= MAX_CACHED_SUBSCRIPTIONS) this.#keys.delete(this.#keys.keys().next().value as string);
      this.#keys.set(target.id, entry);
    }
    return entry;
  }
}
