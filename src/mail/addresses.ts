// Recipient parsing for the pre-send guard and the intake: every address is reduced to its bare,
// lower-cased form, so `"Jane" <JANE@example.com>` and `jane@example.com` are the same recipient.
// nodemailer's RFC 5322 address parser does the parsing (quoted names, groups, comments).
import addressparser from 'nodemailer/lib/addressparser';

export interface Mailbox {
  /** Display name as written ('' when none). */
  name: string;
  /** Lower-cased bare address, the key of the suppression list. */
  address: string;
}

// One @, no whitespace or angle brackets, a dot in the domain: enough to refuse garbage before sending.
const BARE_ADDRESS = /^[^\s@<>()",;:\\]+@[^\s@<>()",;:\\]+\.[^\s@<>()",;:\\]+$/;

export function normaliseAddress(address: string): string {
  return address.trim().toLowerCase();
}

/**
 * Parses header-style recipient strings (each may hold several comma-separated addresses or groups).
 * Returns the valid mailboxes and the inputs that held no usable address.
 */
export function parseRecipients(values: readonly string[]): { mailboxes: Mailbox[]; invalid: string[] } {
  const mailboxes: Mailbox[] = [];
  const invalid: string[] = [];
  for (const value of values) {
    const parsed = addressparser(value, { flatten: true });
    let found = 0;
    for (const entry of parsed) {
      const address = normaliseAddress(entry.address ?? '');
      if (!BARE_ADDRESS.test(address) || address.length > 254) continue;
      mailboxes.push({ name: entry.name ?? '', address });
      found++;
    }
    if (found === 0 || found < parsed.length) invalid.push(value);
  }
  return { mailboxes, invalid };
}

/** Reads one address written either bare or as `Name <addr>`; null when it is not one valid address. */
export function parseOneAddress(value: string): string | null {
  // The form SES writes (a bare address) needs no RFC 5322 parsing: none of the characters the parser
  // treats specially can be in it, so it would return it unchanged.
  const bare = normaliseAddress(value);
  if (bare.length <= 254 && BARE_ADDRESS.test(bare)) return bare;
  const { mailboxes, invalid } = parseRecipients([value]);
  return mailboxes.length === 1 && invalid.length === 0 ? mailboxes[0].address : null;
}

export function asList(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}
