// The bearer token of the metrics endpoints (SERVICE_METRICS_TOKEN). A presented token is compared with
// the configured one in constant time: both are hashed to SHA-256 digests of equal length first, so
// neither the comparison's time nor a length check says how much of a guess was right.
import { createHash, timingSafeEqual } from 'node:crypto';

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/** The 401's header: a Prometheus server (or anyone) is asked for a bearer token. */
export const METRICS_CHALLENGE = 'Bearer realm="metrics"';
export const METRICS_REFUSED =
  'GET /metrics needs the metrics token as a bearer token (Authorization: Bearer <token>).';

export class MetricsToken {
  readonly #digest: Buffer;

  constructor(token: string) {
    this.#digest = sha256(token);
  }

  /** Whether an Authorization header is exactly `Bearer <the token>`. */
  accepts(authorization: string | undefined): boolean {
    const presented = authorization !== undefined && authorization.startsWith('Bearer ') ? authorization.slice(7) : '';
    // Hashed and compared even when nothing was presented: a refusal takes as long either way.
    const same = timingSafeEqual(sha256(presented), this.#digest);
    return same && presented !== '';
  }
}
