// Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document): a client whose
// client_id is an https URL needs no registration; the authorization server fetches the client's
// metadata from that URL. oidc-provider implements the feature (features.clientIdMetadataDocument:
// the document's client_id must equal the URL, no shared secrets, at most 5 KB, a 2.5 s deadline, a
// cache kept as the answer's Cache-Control allows). What it leaves to the deployment is the fetch
// itself, which this module is (the library's `fetch` setting, used for nothing else here):
//  - through the SSRF guard of webhook deliveries (webhooks/ssrf.ts), with the same resolver and
//    allow-list settings (SERVICE_DNS_SERVERS, SERVICE_WEBHOOKS_ALLOWED_CIDRS); the connection goes
//    to an address the guard has just checked, never to a second lookup;
//  - https only, no redirects, the body read up to the same 5 KB and no further;
//  - the document goes through this service's client metadata rules (registration.ts) before the
//    library sees it, as a registration body does: public client (`none`), https or loopback
//    redirect URIs, registry scopes, and the registered scope is no ceiling.
import net from 'node:net';
import { Agent, buildConnector, request } from 'undici';
import type { WebhookSettings } from '../config.ts';
import type { ScopeRegistry } from '../http/scopes.ts';
import { AddressGuard } from '../webhooks/ssrf.ts';
import { RegistrationError, normaliseClientMetadata } from './registration.ts';

/** The library's own limit for a metadata document (fetchResponseBodyLimits). */
export const MAX_DOCUMENT_BYTES = 5 * 1024;
const CONNECT_TIMEOUT_MS = 2500;
// Informational fields a document may carry besides the ones the rules read.
const DOCUMENT_FIELDS = [
  'client_name',
  'grant_types',
  'response_types',
  'redirect_uris',
  'scope',
  'client_uri',
  'logo_uri',
  'policy_uri',
  'tos_uri',
  'contacts',
];

export class MetadataDocumentRefused extends Error {}

type FetchInit = { signal?: AbortSignal | null; headers?: unknown };

/** The `fetch` the provider is configured with: metadata documents only, as described above. */
export function metadataDocumentFetch(
  settings: Pick<WebhookSettings, 'allowedCidrs' | 'dnsServers'>,
  registry: ScopeRegistry,
) {
  const guard = new AddressGuard(settings);
  const tlsConnect = buildConnector({ timeout: CONNECT_TIMEOUT_MS } as buildConnector.BuildOptions);
  const agent = new Agent({
    keepAliveTimeout: 4_000,
    connect: (opts, callback) => {
      guard.addressesFor(opts.hostname).then(
        ([address]) => {
          const servername = net.isIP(opts.hostname.replace(/^\[|\]$/g, '')) ? undefined : opts.hostname;
          tlsConnect({ ...opts, hostname: address, servername } as buildConnector.Options, callback);
        },
        (error: Error) => callback(error, null),
      );
    },
  });

  return async function fetchMetadataDocument(url: string | URL, init: FetchInit = {}): Promise<Response> {
    const target = new URL(url);
    if (target.protocol !== 'https:')
      throw new MetadataDocumentRefused('client metadata documents are fetched over https only');
    const response = await request(target, {
      method: 'GET',
      headers: { accept: 'application/json', 'user-agent': 'svc-oauth' },
      dispatcher: agent,
      signal: init.signal ?? AbortSignal.timeout(CONNECT_TIMEOUT_MS),
    });
    // A redirect is an answer like any other non-200: the library refuses the client.
    // A body not read to its end is dropped with its connection (its abort error is expected).
    const discard = () => response.body.on('error', () => {}).destroy();
    if (response.statusCode !== 200) {
      discard();
      return new Response(null, { status: response.statusCode });
    }
    const tooLarge = () => new MetadataDocumentRefused(`the document is larger than ${MAX_DOCUMENT_BYTES} bytes`);
    if (Number(response.headers['content-length'] ?? 0) > MAX_DOCUMENT_BYTES) {
      discard();
      throw tooLarge();
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of response.body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_DOCUMENT_BYTES) {
        discard();
        throw tooLarge();
      }
      chunks.push(chunk);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      throw new MetadataDocumentRefused('the document is not JSON');
    }
    const document = normaliseMetadataDocument(parsed, target.href, registry);
    const headers = new Headers({ 'content-type': 'application/json' });
    for (const name of ['cache-control', 'expires']) {
      const value = response.headers[name];
      if (typeof value === 'string') headers.set(name, value);
    }
    return new Response(JSON.stringify(document), { status: 200, headers });
  };
}

/**
 * A fetched document as the library should see it: the client_id it names (the library checks it
 * equals the URL), and the fields this service reads, through the registration rules. A client
 * known by a document is public: it has no secret to authenticate with.
 */
export function normaliseMetadataDocument(
  document: unknown,
  url: string,
  registry: ScopeRegistry,
): Record<string, unknown> {
  if (!document || typeof document !== 'object' || Array.isArray(document))
    throw new MetadataDocumentRefused('the document is not a JSON object');
  const input = document as Record<string, unknown>;
  if (input.client_id !== url) throw new MetadataDocumentRefused('the document names another client_id');
  const method = input.token_endpoint_auth_method ?? 'none';
  if (method !== 'none')
    throw new MetadataDocumentRefused('a client known by a metadata document authenticates with "none"');
  const fields: Record<string, unknown> = { token_endpoint_auth_method: 'none' };
  for (const field of DOCUMENT_FIELDS) if (input[field] !== undefined) fields[field] = input[field];
  try {
    return { client_id: url, ...normaliseClientMetadata(fields, registry) };
  } catch (error) {
    if (error instanceof RegistrationError) throw new MetadataDocumentRefused(error.message);
    throw error;
  }
}

/** The library's feature settings: any well-formed https client_id may be fetched (the guard decides where it may go). */
export function clientIdMetadataDocumentFeature() {
  return {
    enabled: true,
    ack: 'draft-02',
    // Kept as long as the answer's Cache-Control max-age (or Expires) says, at most a day; an answer
    // without either, or with no-store/no-cache, is not kept (fetched again at each use).
    cacheDuration: { min: 0, max: 86400 },
  } as const;
}
