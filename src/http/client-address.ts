// The client's address, for throttling and logs. It is the socket's peer address, unless that peer
// is one of SERVICE_TRUSTED_PROXIES: then X-Forwarded-For is read from the right, skipping the
// trusted hops, and the right-most untrusted hop is the client (the hops to its left were written by
// the client itself and can be forged). Fastify's own `trustProxy` is left off: it takes the
// left-most XFF entry when given a hop count, and we want the per-request logic in one place that
// the raw OAuth handlers can call too. One ClientAddresses per app (ctx.clientAddresses), built from
// its settings: the ranges are parsed once, and the hot path only matches.
import type { IncomingMessage } from 'node:http';
import ipaddr from 'ipaddr.js';

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** "10.0.0.0/8", "2001:db8::/32" or a single address ("10.0.0.1" is a /32, "::1" a /128). */
export function parseRange(text: string): Range {
  if (text.includes('/')) {
    const [address, bits] = ipaddr.parseCIDR(text);
    return address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96
      ? [(address as ipaddr.IPv6).toIPv4Address(), bits - 96]
      : [address, bits];
  }
  const address = ipaddr.process(text);
  return [address, address.kind() === 'ipv4' ? 32 : 128];
}

/** Parses an address, folding IPv4-mapped IPv6 (`::ffff:1.2.3.4`) to IPv4; null when not an address. */
function parseAddress(text: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  try {
    return ipaddr.process(text);
  } catch {
    return null;
  }
}

function isTrusted(address: ipaddr.IPv4 | ipaddr.IPv6, ranges: Range[]): boolean {
  for (const range of ranges) {
    if (range[0].kind() === address.kind() && address.match(range)) return true;
  }
  return false;
}

/** XFF entries may carry a port ("1.2.3.4:5678", "[2001:db8::1]:443"); the address alone is wanted. */
function stripPort(hop: string): string {
  if (hop.startsWith('[')) {
    const end = hop.indexOf(']');
    return end > 0 ? hop.slice(1, end) : hop;
  }
  const colon = hop.indexOf(':');
  return colon > 0 && colon === hop.lastIndexOf(':') ? hop.slice(0, colon) : hop;
}

/** Socket addresses as Node reports them, with IPv4-mapped IPv6 folded to IPv4. */
function socketAddress(raw: IncomingMessage): string {
  const address = raw.socket?.remoteAddress ?? '';
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}

export class ClientAddresses {
  readonly #ranges: Range[];

  /** `trustedProxies`: SERVICE_TRUSTED_PROXIES, as ranges or single addresses. */
  constructor(trustedProxies: readonly string[]) {
    this.#ranges = trustedProxies.map(parseRange);
  }

  /** The client's address for this request (see the top of this file). */
  of(raw: IncomingMessage): string {
    const peer = socketAddress(raw);
    const ranges = this.#ranges;
    // The common case (no proxies configured) costs one property read and no parsing.
    if (ranges.length === 0) return peer;
    let current = parseAddress(peer);
    if (!current || !isTrusted(current, ranges)) return peer;
    const header = raw.headers['x-forwarded-for'];
    if (!header) return current.toString();
    // Node joins repeated X-Forwarded-For headers with ", ", so one split covers both forms.
    const hops = (Array.isArray(header) ? header.join(',') : header).split(',');
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = parseAddress(stripPort(hops[i].trim()));
      // A malformed entry cannot be a client we can name; the last good hop to its right is the
      // nearest address we can vouch for.
      if (!hop) break;
      current = hop;
      if (!isTrusted(hop, ranges)) break;
    }
    return current.toString();
  }
}
