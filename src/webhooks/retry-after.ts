// A receiver's Retry-After (RFC 9110 section 10.2.3: delay seconds or an HTTP-date) on a 429 or 503
// answer: the next attempt waits at least that long, never more than a day (a receiver cannot park
// a delivery for good; the schedule and the attempt count stay as they are).
const MAX_SECONDS = 24 * 3600;

/** Seconds from `now` (ms) the next attempt must wait, or null (another status, or no usable value). */
export function retryAfterSeconds(
  statusCode: number,
  value: string | string[] | undefined,
  now: number,
): number | null {
  if ((statusCode !== 429 && statusCode !== 503) || value === undefined) return null;
  const text = (Array.isArray(value) ? value[0] : value).trim();
  let seconds: number;
  if (/^\d+$/.test(text)) seconds = Number(text);
  else {
    const at = Date.parse(text);
    if (Number.isNaN(at)) return null;
    seconds = Math.ceil((at - now) / 1000);
  }
  return seconds > 0 ? Math.min(seconds, MAX_SECONDS) : null;
}
