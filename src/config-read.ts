// Reading one setting from the environment: each reader trims, applies the default, and stops the
// process with a message naming the variable when the value is bad (ConfigError). config.ts and
// its capability files (config-*.ts) read every setting through these.
export class ConfigError extends Error {}

export type Env = Record<string, string | undefined>;

export interface RateSpec {
  limit: number;
  windowSeconds: number;
}

export function raw(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

export function readString(env: Env, name: string, fallback: string): string {
  return raw(env, name) ?? fallback;
}

export function readBool(env: Env, name: string, fallback: boolean): boolean {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  const lowered = value.toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(lowered)) return true;
  if (['0', 'false', 'no', 'off'].includes(lowered)) return false;
  throw new ConfigError(`${name} must be true or false, got "${value}"`);
}

export function readInt(env: Env, name: string, fallback: number, min: number, max: number): number {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  if (!/^-?\d+$/.test(value)) throw new ConfigError(`${name} must be an integer, got "${value}"`);
  const parsed = Number(value);
  if (parsed < min || parsed > max) {
    throw new ConfigError(`${name} must be between ${min} and ${max}, got ${parsed}`);
  }
  return parsed;
}

export function readList(env: Env, name: string): string[] {
  const value = raw(env, name);
  if (value === undefined) return [];
  return value.split(/[\s,]+/).filter(Boolean);
}

const RATE_UNITS: Record<string, number> = { second: 1, minute: 60, hour: 3600, day: 86400 };

export function readRate(env: Env, name: string, fallback: string): RateSpec {
  const value = raw(env, name) ?? fallback;
  // At most 15 digits: the limit is sent as the `q` of RateLimit-Policy, a structured-field Integer.
  const match = /^(\d{1,15})\/(second|minute|hour|day)$/.exec(value);
  if (!match || Number(match[1]) < 1) {
    throw new ConfigError(
      `${name} must look like "100/hour" (a count of 1 to 15 digits; units: second, minute, hour, day), got "${value}"`,
    );
  }
  return { limit: Number(match[1]), windowSeconds: RATE_UNITS[match[2]] };
}

export function readSeconds(env: Env, name: string, fallback: number, min: number, max: number): number {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  if (!/^\d+(\.\d+)?$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new ConfigError(`${name} must be a number of seconds between ${min} and ${max}, got "${value}"`);
  }
  return Number(value);
}

export function readCidrs(env: Env, name: string): string[] {
  const cidrs = readList(env, name);
  for (const cidr of cidrs) {
    const match = /^([0-9a-fA-F:.]+)\/(\d{1,3})$/.exec(cidr);
    const ok =
      match &&
      (/^\d+\.\d+\.\d+\.\d+$/.test(match[1])
        ? Number(match[2]) <= 32
        : match[1].includes(':') && Number(match[2]) <= 128);
    if (!ok) throw new ConfigError(`${name} must list CIDRs such as 127.0.0.2/32, got "${cidr}"`);
  }
  return cidrs;
}
