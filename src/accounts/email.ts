/**
 * Normalises an e-mail address for storage and lookup: trimmed and lower-cased as a whole.
 * Lower-casing the local part is what every mainstream provider does in practice and what makes
 * the unique index case-insensitive on both databases.
 */
export function normaliseEmail(value: string): string {
  return value.trim().toLowerCase();
}

// Deliberately simple: one @, no spaces, a dot in the domain. Deliverability is proven by the
// verification mail, not by a regex.
const EMAIL = /^[^\s@<>()"',;:]+@[^\s@<>()"',;:]+\.[^\s@<>()"',;:]+$/;

export function isValidEmail(value: string): boolean {
  return value.length <= 254 && EMAIL.test(value);
}
