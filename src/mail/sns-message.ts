// The SNS HTTP message envelope: shape checks (400) and the signature (403), per the AWS documentation
// "Verifying the signatures of Amazon SNS messages". Only the signed fields of a verified message are used.
import { verify, type KeyObject } from 'node:crypto';

export type SnsType = 'Notification' | 'SubscriptionConfirmation' | 'UnsubscribeConfirmation';

export interface SnsMessage {
  Type: SnsType;
  MessageId: string;
  TopicArn: string;
  Message: string;
  Timestamp: string;
  SignatureVersion: string;
  Signature: string;
  SigningCertURL: string;
  Subject?: string;
  SubscribeURL?: string;
  Token?: string;
}

// The signed fields of each message type, in the order of the string to sign.
const SIGNED_FIELDS: Record<SnsType, readonly (keyof SnsMessage)[]> = {
  Notification: ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type'],
  SubscriptionConfirmation: ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'],
  UnsubscribeConfirmation: ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'],
};

const COMMON_REQUIRED = [
  'Type',
  'MessageId',
  'TopicArn',
  'Message',
  'Timestamp',
  'SignatureVersion',
  'Signature',
  'SigningCertURL',
] as const;

export class EnvelopeInvalid extends Error {}

/** Checks the envelope's shape; throws EnvelopeInvalid (400) naming the first problem. */
export function parseEnvelope(body: unknown): SnsMessage {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new EnvelopeInvalid('The body must be a JSON object.');
  const fields = body as Record<string, unknown>;
  for (const name of COMMON_REQUIRED) {
    if (typeof fields[name] !== 'string') throw new EnvelopeInvalid(`Field "${name}" must be a string.`);
  }
  const type = fields.Type as string;
  if (!(type in SIGNED_FIELDS)) throw new EnvelopeInvalid(`Unsupported message Type "${type.slice(0, 64)}".`);
  if (type !== 'Notification') {
    for (const name of ['SubscribeURL', 'Token']) {
      if (typeof fields[name] !== 'string') throw new EnvelopeInvalid(`Field "${name}" must be a string.`);
    }
  }
  // SNS omits Subject when there is none; a null is treated the same. Anything else must be a string.
  if (fields.Subject !== undefined && fields.Subject !== null && typeof fields.Subject !== 'string') {
    throw new EnvelopeInvalid('Field "Subject" must be a string.');
  }
  const message = { ...fields } as unknown as SnsMessage;
  if (fields.Subject === null) delete message.Subject;
  return message;
}

export function stringToSign(message: SnsMessage): string {
  let text = '';
  for (const field of SIGNED_FIELDS[message.Type]) {
    const value = message[field];
    if (value === undefined) continue; // only Subject may be absent
    text += `${field}\n${value}\n`;
  }
  return text;
}

const ALGORITHMS: Record<string, string> = { '1': 'RSA-SHA1', '2': 'RSA-SHA256' };

export function isSupportedSignatureVersion(version: string): boolean {
  return Object.hasOwn(ALGORITHMS, version);
}

export function signatureIsValid(message: SnsMessage, key: KeyObject): boolean {
  const algorithm = ALGORITHMS[message.SignatureVersion];
  if (!algorithm || !/^[A-Za-z0-9+/]+={0,2}$/.test(message.Signature)) return false;
  try {
    return verify(algorithm, Buffer.from(stringToSign(message), 'utf8'), key, Buffer.from(message.Signature, 'base64'));
  } catch {
    return false;
  }
}
