// The one place a delivery is signed: X-Service-Signature over the exact body, with the
// subscription's current secret and, during a rotation's overlap window, its previous one too.
import { decryptSecret } from '../util/encryption.ts';
import { hmacKey, signatureHeader, type HmacKey } from './signing.ts';
import { secretContext } from './subscriptions.ts';
import type { DeliveryTarget } from './queue.ts';

/** A signature, and when (ms) it was made. */
export interface Signature {
  header: string;
  at: number;
}

/**
 * A signature made at claim time is sent if at most this old; an older one (its row waited long in
 * the buffer) is made again at the attempt. Its `t` is then at most this far behind the sending
 * time, well inside the 5 minutes receivers tolerate.
 */
const MAX_SIGNATURE_AGE_MS = 5_000;
const MAX_CACHED_SUBSCRIPTIONS = 10_000;

type SigningTarget = Pick<DeliveryTarget, 'id' | 'secret_encrypted' | 'previous_secret_encrypted' | 'previous_secret_expires_at'>;

interface SigningKeys {
  current: string;
  previous: string | null;
  keys: HmacKey[];
  previousUntil: number;
}

export class DeliverySigner {
  readonly #secretKey: string;
  /** By subscription: its secrets decrypted once, until a rotation changes the encrypted values. */
  readonly #keys = new Map<string, SigningKeys>();

  constructor(secretKey: string) {
    this.#secretKey = secretKey;
  }

  /** Signs `payload` as sent at `now` (ms). */
  sign(target: SigningTarget, payload: string, now = Date.now()): Signature {
    return { header: signatureHeader(this.#keysOf(target, now), Math.floor(now / 1000), payload), at: now };
  }

  /** The header to send now: `presigned` while it is fresh, else a new signature. */
  header(target: SigningTarget, payload: string, presigned: Signature | null): string {
    const now = Date.now();
    return presigned && now - presigned.at <= MAX_SIGNATURE_AGE_MS ? presigned.header : this.sign(target, payload, now).header;
  }

  /** The HMAC keys to sign with, newest first; the previous secret only until its overlap ends. */
  #keysOf(target: SigningTarget, now: number): HmacKey[] {
    let entry = this.#keys.get(target.id);
    if (!entry || entry.current !== target.secret_encrypted || entry.previous !== target.previous_secret_encrypted) {
      const decrypt = (encrypted: string) => hmacKey(decryptSecret(this.#secretKey, encrypted, secretContext(target.id)));
      const keys = [decrypt(target.secret_encrypted)];
      if (target.previous_secret_encrypted) keys.push(decrypt(target.previous_secret_encrypted));
      entry = {
        current: target.secret_encrypted,
        previous: target.previous_secret_encrypted,
        keys,
        previousUntil: target.previous_secret_expires_at ? Date.parse(target.previous_secret_expires_at) : 0,
      };
      if (this.#keys.size >= MAX_CACHED_SUBSCRIPTIONS) this.#keys.delete(this.#keys.keys().next().value as string);
      this.#keys.set(target.id, entry);
    }
    return entry.keys.length > 1 && now >= entry.previousUntil ? entry.keys.slice(0, 1) : entry.keys;
  }
}
