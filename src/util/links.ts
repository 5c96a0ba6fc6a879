// Detects links in short human text (names, invitation messages). Those fields end up in e-mails
// and pages other people read, which makes them a spam and phishing vector ("Claim your prize at
// evil.example"), so they refuse anything a mail client or browser would turn into a link.
// Deliberately a short list of patterns rather than a full URL parser: a parser finds URLs that
// are well formed, while this must also catch the bare `domain.tld` forms clients auto-link.
const SCHEME = /\b[a-z][a-z0-9+.-]*:\/\/|\b(?:mailto|javascript|data|tel|sms):/i;
const WWW = /\bwww\d*\./i;
const IPV4 = /\b\d{1,3}(?:\.\d{1,3}){3}\b/;
// Top-level domains that mail clients auto-link, plus the ones spam favours.
const DOMAIN =
  /\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|net|org|edu|gov|io|co|info|biz|xyz|top|ru|cn|me|app|dev|ly|gg|link|site|online|shop|club|live|tk|ml|ga|cf|gq|de|uk|us|fr|nl|ai|to|cc|tv|ws|click|win|bid|loan|store|tech|space|website|pw|su|in|br|jp|eu|ca|au|es|it|pl|ch|se|no|be|at|cz|ir|kr|vn|id)\b/i;

export function containsLink(text: string): boolean {
  return SCHEME.test(text) || WWW.test(text) || IPV4.test(text) || DOMAIN.test(text);
}

/** Control characters (including newlines) have no place in a one-line name. */
export const hasControlCharacters = (text: string) => /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(text);
