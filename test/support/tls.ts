// A private CA and a server certificate for the local HTTPS receivers, made fresh per test run with
// @peculiar/x509. The delivery client trusts the CA through its `ca` option (in-process workers) or
// NODE_EXTRA_CA_CERTS (worker subprocesses).
import { webcrypto } from 'node:crypto';
// @peculiar/x509 uses tsyringe, which needs the Reflect metadata polyfill loaded first.
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

export interface TestPki {
  caPem: string;
  certPem: string;
  keyPem: string;
}

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

function pem(label: string, der: ArrayBuffer): string {
  const b64 = Buffer.from(der)
    .toString('base64')
    .replace(/(.{64})/g, '$1\n')
    .trim();
  return `-----BEGIN ${label}-----\n${b64}\n-----END ${label}-----\n`;
}

let cached: Promise<TestPki> | null = null;

/** Server names the certificate covers: the loopback addresses and the test DNS names. */
export const CERT_NAMES = ['hooks.example.test', 'rebind.example.test', 'ok.example.test'];

export function testPki(): Promise<TestPki> {
  cached ??= (async () => {
    const now = Date.now();
    const notBefore = new Date(now - 3600_000);
    const notAfter = new Date(now + 7 * 86400_000);
    const caKeys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair;
    const ca = await x509.X509CertificateGenerator.createSelfSigned({
      serialNumber: '01',
      name: 'CN=svc test CA',
      notBefore,
      notAfter,
      keys: caKeys,
      signingAlgorithm: ALG,
      extensions: [
        new x509.BasicConstraintsExtension(true, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
        await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey),
      ],
    });
    const serverKeys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair;
    const cert = await x509.X509CertificateGenerator.create({
      serialNumber: '02',
      subject: 'CN=127.0.0.1',
      issuer: ca.subject,
      notBefore,
      notAfter,
      publicKey: serverKeys.publicKey,
      signingKey: caKeys.privateKey,
      signingAlgorithm: ALG,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
        new x509.SubjectAlternativeNameExtension([
          { type: 'ip', value: '127.0.0.1' },
          { type: 'ip', value: '127.0.0.2' },
          ...CERT_NAMES.map((value) => ({ type: 'dns' as const, value })),
        ]),
        await x509.AuthorityKeyIdentifierExtension.create(caKeys.publicKey),
      ],
    });
    const keyDer = await webcrypto.subtle.exportKey('pkcs8', serverKeys.privateKey);
    return { caPem: ca.toString('pem'), certPem: cert.toString('pem'), keyPem: pem('PRIVATE KEY', keyDer) };
  })();
  return cached;
}
