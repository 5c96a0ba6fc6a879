// Prometheus metrics settings (docs/operations.md, "Monitoring").
import { ConfigError, raw, readInt, type Env } from './config-read.ts';

export interface MetricsSettings {
  /** The bearer token GET /metrics asks for; null: no metrics endpoint (404). */
  token: string | null;
  /** The port on which `svc worker` serves its own metrics; null: none. */
  workerPort: number | null;
}

export function readMetricsSettings(env: Env): MetricsSettings {
  const token = raw(env, 'SERVICE_METRICS_TOKEN') ?? null;
  // An RFC 6750 bearer token (the characters a header carries unquoted), long enough not to be guessed.
  if (token !== null && !/^[A-Za-z0-9._~+/-]{16,256}=*$/.test(token)) {
    throw new ConfigError(
      'SERVICE_METRICS_TOKEN must be 16 to 256 letters, digits or - . _ ~ + / (e.g. openssl rand -hex 32)',
    );
  }
  const workerPort =
    raw(env, 'SERVICE_WORKER_METRICS_PORT') === undefined
      ? null
      : readInt(env, 'SERVICE_WORKER_METRICS_PORT', 0, 0, 65535);
  if (workerPort !== null && token === null)
    throw new ConfigError('SERVICE_WORKER_METRICS_PORT needs SERVICE_METRICS_TOKEN (the token its /metrics asks for)');
  return { token, workerPort };
}
