/** Now as the fixed-width ISO 8601 UTC string stored in every time column. */
export function nowIso(): string {
  return new Date().toISOString();
}

export function isoAfter(seconds: number, from: number = Date.now()): string {
  return new Date(from + seconds * 1000).toISOString();
}
