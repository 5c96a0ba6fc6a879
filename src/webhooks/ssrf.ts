// The SSRF guard: a webhook URL may only ever reach the public Internet. It is applied when a
// subscription is created or updated and again before every attempt (DNS answers change: a name
// may resolve public at creation and private later). Delivery connects to an address this guard
// returned, never to a second lookup (see http-client.ts).
//
// ipaddr.js classifies the addresses; the policy around it (which classes pass, the embedded IPv4
// of mapped/compatible/NAT64 IPv6 forms, `localhost` names, every DNS answer) is ours.
import dns from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';
import type { WebhookSettings } from '../config.ts';

export const MAX_URL_LENGTH = 2048;

export class SsrfRefusal extends Error {}

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** IPv6 global unicast is 2000::/3; ipaddr.js calls everything outside its special list "unicast". */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');
/** Deprecated IPv4-compatible IPv6 (::a.b.c.d); ipaddr.js has no class for it. */
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96');

function describe(address: Address): string {
  return address.kind() === 'ipv6' ? `[${address.toString()}]` : address.toString();
}

/**
 * Checks the syntax rules of a subscription URL: absolute https, no userinfo, at most 2,048
 * characters. Returns the parsed URL. WHATWG URL parsing already turns decimal, octal and hex
 * IPv4 spellings (`https://2130706433/`, `https://0x7f.1/`) into dotted form.
 */
export function parseWebhookUrl(value: string): URL {
  if (value.length > MAX_URL_LENGTH) throw new SsrfRefusal(`The URL is longer than ${MAX_URL_LENGTH} characters.`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new SsrfRefusal('The URL is not a valid absolute URL.');
  }
  if (url.protocol !== 'https:') throw new SsrfRefusal('The URL must use https://.');
  if (url.username || url.password) throw new SsrfRefusal('The URL must not contain a user name or password.');
  if (!url.hostname) throw new SsrfRefusal('The URL has no host.');
  return url;
}

/** Verdicts remembered per address text (an address's class never changes; the settings are fixed). */
const VERDICT_CACHE_SIZE = 1024;

export class AddressGuard {
  readonly #allowed: [Address, number][];
  readonly #resolver: dns.promises.Resolver | null;
  /**
   * Address text → refusal (or null): the guard runs before every attempt, and parsing and
   * classifying the same few addresses each time would be a noticeable share of a delivery's CPU.
   */
  readonly #verdicts = new Map<string, string | null>();

  constructor(settings: Pick<WebhookSettings, 'allowedCidrs' | 'dnsServers'>) {
    this.#allowed = settings.allowedCidrs.map((cidr) => ipaddr.parseCIDR(cidr));
    if (settings.dnsServers.length > 0) {
      this.#resolver = new dns.promises.Resolver({ timeout: 2000, tries: 2 });
      this.#resolver.setServers(settings.dnsServers);
    } else {
      this.#resolver = null;
    }
  }

  /** Why this address may not be reached, or null when it may. */
  refusalFor(text: string): string | null {
    let verdict = this.#verdicts.get(text);
    if (verdict === undefined) {
      verdict = this.#classify(text);
      // Bounded: past the limit the oldest verdict goes (DNS answers can name many addresses).
      if (this.#verdicts.size >= VERDICT_CACHE_SIZE) this.#verdicts.delete(this.#verdicts.keys().next().value!);
      this.#verdicts.set(text, verdict);
    }
    return verdict;
  }

  #classify(text: string): string | null {
    let address: Address;
    try {
      address = ipaddr.parse(text.replace(/^\[|\]$/g, ''));
    } catch {
      return `"${text}" is not an IP address.`;
    }
    if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()) {
      address = (address as ipaddr.IPv6).toIPv4Address();
    }
    if (this.#allowed.some(([net, bits]) => net.kind() === address.kind() && address.match(net, bits))) return null;
    if (address.kind() === 'ipv4') {
      const range = address.range();
      return range === 'unicast' ? null : `${describe(address)} is a ${range} address.`;
    }
    const v6 = address as ipaddr.IPv6;
    const range = v6.range();
    if (range !== 'unicast') return `${describe(v6)} is a ${range} address.`;
    if (v6.match(IPV4_COMPATIBLE)) return `${describe(v6)} is an IPv4-compatible address.`;
    if (!v6.match(GLOBAL_UNICAST_V6)) return `${describe(v6)} is a reserved address.`;
    return null;
  }

  /**
   * Resolves the host of `url` and checks every answer. Returns the addresses that passed (all of
   * them; any refused answer refuses the URL). Throws SsrfRefusal with a reason.
   */
  async addressesFor(hostname: string): Promise<string[]> {
    const host = hostname
      .replace(/^\[|\]$/g, '')
      .toLowerCase()
      .replace(/\.$/, '');
    if (net.isIP(host)) {
      const refusal = this.refusalFor(host);
      if (refusal) throw new SsrfRefusal(`The host ${refusal}`);
      return [host];
    }
    if (host === 'localhost' || host.endsWith('.localhost')) throw new SsrfRefusal('The host is a localhost name.');
    if (!host.includes('.')) throw new SsrfRefusal('The host must be a fully qualified domain name.');
    const addresses = await this.#resolve(host);
    if (addresses.length === 0) throw new SsrfRefusal(`The host ${host} does not resolve to any address.`);
    for (const address of addresses) {
      const refusal = this.refusalFor(address);
      if (refusal) throw new SsrfRefusal(`The host ${host} resolves to ${address}: ${refusal}`);
    }
    return addresses;
  }

  async #resolve(host: string): Promise<string[]> {
    try {
      if (!this.#resolver) {
        const answers = await dns.promises.lookup(host, { all: true, order: 'ipv4first' });
        return answers.map((answer) => answer.address);
      }
      const settle = (promise: Promise<string[]>) =>
        promise.catch((error: NodeJS.ErrnoException) => {
          // "No record of this type" is an empty answer; anything else is a failure to resolve.
          if (error.code === dns.NODATA || error.code === dns.NOTFOUND) return [] as string[];
          throw error;
        });
      const [v4, v6] = await Promise.all([
        settle(this.#resolver.resolve4(host)),
        settle(this.#resolver.resolve6(host)),
      ]);
      return [...v4, ...v6];
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOTFOUND' || code === dns.NOTFOUND) return [];
      throw new SsrfRefusal(`The host ${host} could not be resolved (${code ?? (error as Error).message}).`);
    }
  }
}
