// Strict checks of the URLs an SNS message asks the service to fetch, applied before any network I/O
// (docs/mail.md, "Verification" 2 and 3). Checked on the raw string by one anchored pattern, so that
// nothing a URL parser would normalise away (userinfo, `%2e`, backslashes, default-port spellings) gets in.

// AWS region names: `us-east-1`, `eu-central-2`, `us-gov-west-1`, `cn-north-1`, `ap-southeast-4`, …
const REGION = '[a-z]{2}(?:-gov)?-[a-z]+-\\d{1,2}';
// `sns.<region>.amazonaws.com` (commercial and GovCloud) or `sns.<cn-region>.amazonaws.com.cn` (China).
const HOST = `sns\\.(?:${REGION}\\.amazonaws\\.com|cn-[a-z]+-\\d{1,2}\\.amazonaws\\.com\\.cn)`;
const ORIGIN = `https://${HOST}(?::443)?`;

const SIGNING_CERT_URL = new RegExp(`^${ORIGIN}/SimpleNotificationService-[A-Za-z0-9]{1,64}\\.pem$`);
// Path `/`, query starting with Action=ConfirmSubscription; the other parameters (TopicArn, Token) use
// only characters SNS emits unescaped. No `%` at all: an escape is a way to smuggle what the pattern refuses.
const SUBSCRIBE_URL = new RegExp(
  `^${ORIGIN}/\\?Action=ConfirmSubscription(?:&[A-Za-z]{1,32}=[A-Za-z0-9:._-]{0,1024}){0,8}$`,
);

export function isValidSigningCertUrl(value: string): boolean {
  return value.length <= 512 && SIGNING_CERT_URL.test(value);
}

export function isValidSubscribeUrl(value: string): boolean {
  return value.length <= 4096 && SUBSCRIBE_URL.test(value);
}

// Amazon Trust Services publishes its intermediates on `crt.<name>.amazontrust.com` (plain http, as AIA
// URLs usually are: what is fetched is itself a signed certificate, verified before use).
const AIA_URL = /^https?:\/\/crt\.[a-z0-9-]{1,63}\.amazontrust\.com\/[A-Za-z0-9._-]{1,64}\.(?:cer|crt|der|pem)$/;

export function isAmazonTrustServicesUrl(value: string): boolean {
  return AIA_URL.test(value);
}
