// Authenticates the SNS signing certificate before its key is used (docs/mail.md, "Verification" 5):
// validity dates, subject sns.amazonaws.com (or .cn), an RSA key, and a chain that verifies up to a trusted
// root. Node's root store (which holds Amazon's roots) is the default; SERVICE_MAILPROVIDER_TRUST_ANCHORS_FILE
// replaces it. An intermediate that the PEM file does not carry is fetched from the certificate's AIA
// CA-Issuers URL, only from Amazon Trust Services hosts. Authenticated keys are cached by URL until expiry.
// node:crypto's X509Certificate does the cryptography; only the walk up the chain is written here.
import { X509Certificate, type KeyObject } from 'node:crypto';
import fs from 'node:fs';
import tls from 'node:tls';
import { boundedGet, type FetchAgents } from './sns-fetch.ts';
import { isAmazonTrustServicesUrl } from './sns-urls.ts';

export class CertificateRefused extends Error {}

export const CERT_MAX_BYTES = 10 * 1024;
export const FETCH_TIMEOUT_MS = 10_000;
const MAX_CHAIN_DEPTH = 5;
const ALLOWED_SUBJECTS = new Set(['sns.amazonaws.com', 'sns.amazonaws.com.cn']);

/** A Map kept in insertion order, oldest entry evicted first; a hit moves the entry to the end. */
class Lru<V extends { expiresAt: number }> {
  readonly #map = new Map<string, V>();
  readonly #max: number;
  constructor(max: number) {
    this.#max = max;
  }
  get(key: string, now: number): V | undefined {
    const value = this.#map.get(key);
    if (!value) return undefined;
    this.#map.delete(key);
    if (value.expiresAt <= now) return undefined;
    this.#map.set(key, value);
    return value;
  }
  set(key: string, value: V) {
    this.#map.delete(key);
    if (this.#map.size >= this.#max) this.#map.delete(this.#map.keys().next().value as string);
    this.#map.set(key, value);
  }
  get size() {
    return this.#map.size;
  }
}

export function parsePemBundle(text: string): X509Certificate[] {
  const blocks = text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  return blocks.map((block) => new X509Certificate(block));
}

let systemRoots: X509Certificate[] | null = null;
function nodeRootStore(): X509Certificate[] {
  systemRoots ??= tls.rootCertificates.map((pem) => new X509Certificate(pem));
  return systemRoots;
}

function commonName(cert: X509Certificate): string | null {
  const match = /^CN=(.*)$/m.exec(cert.subject);
  return match ? match[1] : null;
}

function isCurrent(cert: X509Certificate, now: number): boolean {
  return Date.parse(cert.validFrom) <= now && now <= Date.parse(cert.validTo);
}

function issuedBy(child: X509Certificate, issuer: X509Certificate): boolean {
  try {
    return child.checkIssued(issuer) && child.verify(issuer.publicKey);
  } catch {
    return false;
  }
}

function aiaIssuerUrl(cert: X509Certificate): string | null {
  return /CA Issuers - URI:(\S+)/.exec(cert.infoAccess ?? '')?.[1] ?? null;
}

export interface CertificateStoreOptions {
  /** null: Node's root store. */
  trustAnchorsFile: string | null;
  /** Read on every fetch, so tests can point a running app at a stand-in. */
  network: () => { agents: FetchAgents; timeoutMs: number };
  maxEntries?: number;
}

export class SnsCertificateStore {
  readonly #anchors: X509Certificate[];
  readonly #network: () => { agents: FetchAgents; timeoutMs: number };
  readonly #keys: Lru<{ key: KeyObject; expiresAt: number }>;
  readonly #intermediates = new Lru<{ cert: X509Certificate; expiresAt: number }>(32);

  constructor(options: CertificateStoreOptions) {
    this.#anchors = options.trustAnchorsFile
      ? parsePemBundle(fs.readFileSync(options.trustAnchorsFile, 'utf8'))
      : nodeRootStore();
    if (this.#anchors.length === 0) throw new Error(`no certificate in ${options.trustAnchorsFile}`);
    this.#network = options.network;
    this.#keys = new Lru(options.maxEntries ?? 64);
  }

  get cachedKeys(): number {
    return this.#keys.size;
  }

  /**
   * The public key of the authenticated certificate at `url` (already checked by isValidSigningCertUrl).
   * Throws CertificateRefused or FetchRefused (403) or FetchTransient (500).
   */
  async publicKeyFor(url: string): Promise<KeyObject> {
    const now = Date.now();
    const cached = this.#keys.get(url, now);
    if (cached) return cached.key;
    const body = await this.#fetch(url);
    let certs: X509Certificate[];
    try {
      certs = parsePemBundle(body.toString('utf8'));
    } catch {
      throw new CertificateRefused('the signing certificate does not parse');
    }
    if (certs.length === 0) throw new CertificateRefused('no certificate at SigningCertURL');
    const [leaf, ...offered] = certs;
    if (!isCurrent(leaf, now))
      throw new CertificateRefused(`the signing certificate is not valid now (${leaf.validFrom} – ${leaf.validTo})`);
    const subject = commonName(leaf);
    if (!subject || !ALLOWED_SUBJECTS.has(subject))
      throw new CertificateRefused(`unexpected certificate subject ${JSON.stringify(subject)}`);
    if (leaf.publicKey.asymmetricKeyType !== 'rsa')
      throw new CertificateRefused('the signing certificate key is not RSA');
    if (leaf.ca) throw new CertificateRefused('the signing certificate is a CA certificate');
    await this.#verifyChain(leaf, offered, now);
    this.#keys.set(url, { key: leaf.publicKey, expiresAt: Date.parse(leaf.validTo) });
    return leaf.publicKey;
  }

  async #verifyChain(leaf: X509Certificate, offered: X509Certificate[], now: number): Promise<void> {
    let current = leaf;
    for (let depth = 0; depth < MAX_CHAIN_DEPTH; depth++) {
      const anchor = this.#anchors.find((root) => issuedBy(current, root));
      if (anchor) {
        if (!isCurrent(anchor, now)) throw new CertificateRefused('the trusted root has expired');
        return;
      }
      // A self-signed certificate that is not a trust anchor ends the chain untrusted.
      if (current.subject === current.issuer && issuedBy(current, current)) {
        throw new CertificateRefused('the certificate chain does not lead to a trusted root');
      }
      let issuer = offered.find((candidate) => candidate !== current && issuedBy(current, candidate));
      issuer ??= await this.#fetchIssuer(current, now);
      if (!issuer.ca) throw new CertificateRefused('an issuer in the chain is not a CA');
      if (!isCurrent(issuer, now)) throw new CertificateRefused('an intermediate certificate is not valid now');
      current = issuer;
    }
    throw new CertificateRefused('the certificate chain is too long');
  }

  async #fetchIssuer(cert: X509Certificate, now: number): Promise<X509Certificate> {
    const url = aiaIssuerUrl(cert);
    if (!url) throw new CertificateRefused('the certificate chain does not lead to a trusted root');
    if (!isAmazonTrustServicesUrl(url))
      throw new CertificateRefused(`intermediate URL ${url} is not an Amazon Trust Services host`);
    const cached = this.#intermediates.get(url, now);
    if (cached && issuedBy(cert, cached.cert)) return cached.cert;
    const body = await this.#fetch(url);
    let issuer: X509Certificate;
    try {
      issuer = new X509Certificate(body);
    } catch {
      throw new CertificateRefused(`the intermediate at ${url} does not parse`);
    }
    if (!issuedBy(cert, issuer))
      throw new CertificateRefused(`the intermediate at ${url} did not issue the certificate`);
    this.#intermediates.set(url, { cert: issuer, expiresAt: Date.parse(issuer.validTo) });
    return issuer;
  }

  #fetch(url: string): Promise<Buffer> {
    const { agents, timeoutMs } = this.#network();
    return boundedGet(url, { agents, timeoutMs, maxBytes: CERT_MAX_BYTES });
  }
}
