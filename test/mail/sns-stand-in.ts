// A local stand-in for the AWS hosts the intake talks to: a test PKI (root CA, intermediate, SNS-like
// signing certificates), an HTTPS server that answers for sns.<region>.amazonaws.com on 127.0.0.1, an HTTP
// server standing in for crt.<name>.amazontrust.com, and the agents that route the intake's connections
// there. The intake's URL checks stay strict: the test reaches the stand-in through the agents only.
// @peculiar/x509 resolves its services through tsyringe, which needs the Reflect metadata polyfill first.
import 'reflect-metadata';
import { createPrivateKey, createSign, webcrypto, type KeyObject } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import * as x509 from '@peculiar/x509';
import type { FetchAgents } from '../../src/mail/sns-fetch.ts';

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

const RSA = {
  name: 'RSASSA-PKCS1-v1_5',
  hash: 'SHA-256',
  publicExponent: new Uint8Array([1, 0, 1]),
  modulusLength: 2048,
};
const DAY = 86_400_000;

export interface Issued {
  cert: x509.X509Certificate;
  pem: string;
  keys: CryptoKeyPair;
  /** The private key as node:crypto wants it, to sign SNS messages. */
  privateKey: KeyObject;
}

async function keyPair(): Promise<CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(RSA, true, ['sign', 'verify'])) as CryptoKeyPair;
}

async function nodeKey(keys: CryptoKeyPair): Promise<KeyObject> {
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  return createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
}

export async function issue(options: {
  subject: string;
  issuer?: Issued;
  ca?: boolean;
  notBefore?: Date;
  notAfter?: Date;
  dnsNames?: string[];
  aia?: string;
}): Promise<Issued> {
  const keys = await keyPair();
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(options.ca ?? false, undefined, true),
    new x509.KeyUsagesExtension(
      options.ca
        ? x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign
        : x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment,
      true,
    ),
    await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
  ];
  if (options.issuer) extensions.push(await x509.AuthorityKeyIdentifierExtension.create(options.issuer.keys.publicKey));
  if (options.dnsNames)
    extensions.push(
      new x509.SubjectAlternativeNameExtension(options.dnsNames.map((value) => ({ type: 'dns' as const, value }))),
    );
  if (options.aia)
    extensions.push(new x509.AuthorityInfoAccessExtension({ caIssuers: new x509.GeneralName('url', options.aia) }));
  const common = {
    serialNumber: Buffer.from(webcrypto.getRandomValues(new Uint8Array(8)))
      .toString('hex')
      .replace(/^[89a-f]/, '1'),
    subject: options.subject,
    notBefore: options.notBefore ?? new Date(Date.now() - DAY),
    notAfter: options.notAfter ?? new Date(Date.now() + 365 * DAY),
    signingAlgorithm: RSA,
    extensions,
  };
  const cert = options.issuer
    ? await x509.X509CertificateGenerator.create({
        ...common,
        issuer: options.issuer.cert.subject,
        publicKey: keys.publicKey,
        signingKey: options.issuer.keys.privateKey,
      })
    : await x509.X509CertificateGenerator.createSelfSigned({ ...common, name: options.subject, keys });
  return { cert, pem: cert.toString('pem'), keys, privateKey: await nodeKey(keys) };
}

export interface Pki {
  root: Issued;
  intermediate: Issued;
  /** Signed by the intermediate, with an AIA URL pointing at the stand-in's Amazon Trust Services host. */
  signing: Issued;
  /** The trust anchors file the app is started with (the root only). */
  anchorsFile: string;
}

export const AIA_URL = 'http://crt.r2m99.amazontrust.com/r2m99.cer';

export async function buildPki(): Promise<Pki> {
  const root = await issue({ subject: 'CN=Test Root CA,O=svc tests', ca: true });
  const intermediate = await issue({ subject: 'CN=Test Intermediate,O=svc tests', ca: true, issuer: root });
  const signing = await issue({ subject: 'CN=sns.amazonaws.com', issuer: intermediate, aia: AIA_URL });
  const anchorsFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'svc-pki-')), 'anchors.pem');
  fs.writeFileSync(anchorsFile, root.pem);
  return { root, intermediate, signing, anchorsFile };
}

export interface Route {
  /** Never answer (the client's deadline must end the wait). */
  hang?: boolean;
  status?: number;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

/** The stand-in servers; `routes` maps `host + path` (query included) to an answer. */
export class StandIn {
  readonly routes = new Map<string, Route>();
  /** Every request received, as `host + path`. */
  readonly requests: string[] = [];
  /** Connections the agents opened (a URL refused before any I/O leaves this at 0). */
  connections = 0;
  #https!: https.Server;
  #http!: http.Server;
  #httpsPort = 0;
  #httpPort = 0;
  readonly #ca: string;

  constructor(ca: string) {
    this.#ca = ca;
  }

  async start(tlsCert: Issued) {
    const handler = (request: http.IncomingMessage, response: http.ServerResponse) => {
      const key = `${request.headers.host}${request.url}`;
      this.requests.push(key);
      const route = this.routes.get(key);
      if (!route) {
        response.writeHead(404).end('not found');
        return;
      }
      if (route.hang) return;
      response.writeHead(route.status ?? 200, route.headers ?? {}).end(route.body ?? '');
    };
    const key = tlsCert.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    this.#https = https.createServer({ cert: tlsCert.pem, key }, handler);
    this.#http = http.createServer(handler);
    await new Promise<void>((resolve) => this.#https.listen(0, '127.0.0.1', resolve));
    await new Promise<void>((resolve) => this.#http.listen(0, '127.0.0.1', resolve));
    this.#httpsPort = (this.#https.address() as net.AddressInfo).port;
    this.#httpPort = (this.#http.address() as net.AddressInfo).port;
  }

  /** Agents that send every https connection to the HTTPS stand-in and every http one to the HTTP stand-in. */
  agents(options: { httpsPort?: number } = {}): FetchAgents {
    const standIn = this;
    class HttpsToStandIn extends https.Agent {
      override createConnection(connectOptions: tls.ConnectionOptions & { host?: string }): net.Socket {
        standIn.connections++;
        return tls.connect({
          ...connectOptions,
          host: '127.0.0.1',
          port: options.httpsPort ?? standIn.#httpsPort,
          servername: connectOptions.servername || connectOptions.host,
          ca: standIn.#ca,
        });
      }
    }
    class HttpToStandIn extends http.Agent {
      override createConnection(): net.Socket {
        standIn.connections++;
        return net.connect({ host: '127.0.0.1', port: standIn.#httpPort });
      }
    }
    return { https: new HttpsToStandIn(), http: new HttpToStandIn() };
  }

  reset() {
    this.requests.length = 0;
    this.connections = 0;
  }

  async stop() {
    this.#https.closeAllConnections();
    this.#http.closeAllConnections();
    await new Promise((resolve) => this.#https.close(resolve));
    await new Promise((resolve) => this.#http.close(resolve));
  }
}

// --- SNS messages -------------------------------------------------------------------------------

export const TOPIC = 'arn:aws:sns:us-east-1:123456789012:ses-events';
export const CERT_URL =
  'https://sns.us-east-1.amazonaws.com/SimpleNotificationService-0123456789abcdef0123456789abcdef.pem';

let sequence = 0;

export function snsStringToSign(message: Record<string, string>): string {
  const fields =
    message.Type === 'Notification'
      ? ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type']
      : ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'];
  return fields
    .filter((f) => message[f] !== undefined)
    .map((f) => `${f}\n${message[f]}\n`)
    .join('');
}

/** Signs an SNS message the way SNS does (SignatureVersion 1: SHA1withRSA, 2: SHA256withRSA). */
export function sign(
  message: Record<string, string>,
  key: KeyObject,
  version: '1' | '2' = '2',
): Record<string, string> {
  const signer = createSign(version === '1' ? 'RSA-SHA1' : 'RSA-SHA256');
  signer.update(snsStringToSign(message));
  return { ...message, SignatureVersion: version, Signature: signer.sign(key, 'base64') };
}

export function notification(
  inner: unknown,
  key: KeyObject,
  options: { version?: '1' | '2'; subject?: string; messageId?: string; topic?: string; certUrl?: string } = {},
): Record<string, string> {
  const message: Record<string, string> = {
    Type: 'Notification',
    MessageId: options.messageId ?? `00000000-0000-4000-8000-${String(++sequence).padStart(12, '0')}`,
    TopicArn: options.topic ?? TOPIC,
    Message: typeof inner === 'string' ? inner : JSON.stringify(inner),
    Timestamp: new Date().toISOString(),
    SigningCertURL: options.certUrl ?? CERT_URL,
    UnsubscribeURL:
      'https://sns.us-east-1.amazonaws.com/?Action=Unsubscribe&SubscriptionArn=arn:aws:sns:us-east-1:123456789012:ses-events:1',
  };
  if (options.subject !== undefined) message.Subject = options.subject;
  return sign(message, key, options.version ?? '2');
}

export function fixture(name: string): Record<string, unknown> {
  // Copied from the shared SES fixtures (see fixtures/ses/README.md).
  return JSON.parse(fs.readFileSync(new URL(`./fixtures/ses/${name}`, import.meta.url), 'utf8'));
}
