// The mail transports, chosen by SERVICE_EMAIL_URL: unset → the development file transport (each message an
// RFC 5322 .eml file under <SERVICE_DATA_DIR>/mail/), smtp:// or smtps:// → nodemailer SMTP (Amazon SES is
// reached through its SMTP endpoint, docs/mail.md). Only the outbox (outbox.ts) calls a transport.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Transporter, TransportOptions } from 'nodemailer';
import type MailComposer from 'nodemailer/lib/mail-composer';
import type { Config } from '../config.ts';
import type { Mailbox } from './addresses.ts';

export interface ComposedMail {
  /** The outbox row id, used in the development file name. */
  id: number;
  from: string;
  to: Mailbox[];
  cc: Mailbox[];
  bcc: Mailbox[];
  subject: string;
  text: string;
  html: string | null;
}

export interface SendResult {
  messageId: string;
  /** Recipients the server refused while accepting the message for the others. */
  rejected?: string[];
  /** The development transport's file. */
  file?: string;
}

export interface MailTransport {
  readonly kind: 'file' | 'smtp';
  send(mail: ComposedMail): Promise<SendResult>;
  close(): void;
}

// nodemailer is loaded when the first message is built or sent, not when the app starts
// (docs/architecture.md, "Lazy loading"); synchronous, as it is CommonJS.
const require = createRequire(import.meta.url);
const loadNodemailer = () => require('nodemailer') as typeof import('nodemailer');
const loadMailComposer = () => require('nodemailer/lib/mail-composer') as typeof MailComposer;

const toAddress = (m: Mailbox) => ({ name: m.name, address: m.address });

function baseMessage(mail: ComposedMail) {
  return {
    from: mail.from,
    to: mail.to.map(toAddress),
    cc: mail.cc.map(toAddress),
    bcc: mail.bcc.map(toAddress),
    subject: mail.subject,
    html: mail.html ?? undefined,
  };
}

/** `20261122T045012345Z`: sorts by time as text. */
function fileStamp(date: Date): string {
  return date.toISOString().replace(/[-:.]/g, '');
}

// RFC 5322 lines are at most 998 octets; a text with a longer line keeps nodemailer's own encoding.
const MAX_LINE = 998;

type MimeNode = ReturnType<MailComposer['compile']>;

function textPart(node: MimeNode): MimeNode | undefined {
  if (String(node.getHeader('Content-Type') ?? '').startsWith('text/plain')) return node;
  for (const child of (node as unknown as { childNodes: MimeNode[] }).childNodes ?? []) {
    const found = textPart(child);
    if (found) return found;
  }
  return undefined;
}

export class FileTransport implements MailTransport {
  readonly kind = 'file' as const;
  readonly directory: string;
  constructor(dataDir: string) {
    this.directory = path.join(dataDir, 'mail');
  }

  /** The RFC 5322 message, as a person reading the file (or a test) wants it. */
  async build(mail: ComposedMail): Promise<{ message: Buffer; messageId: string }> {
    const Composer = loadMailComposer();
    const root = new Composer({ ...baseMessage(mail), text: mail.text, newline: 'windows' }).compile();
    // Bcc stays visible in the development file: it is the only record of who else got the message.
    root.keepBcc = true;
    // The plain-text part goes out as 8bit, so links appear whole in the file. nodemailer would choose
    // quoted-printable for long lines, whose soft line breaks cut a link in two; it writes 8bit content as is.
    const text = textPart(root);
    if (text && mail.text.split(/\r?\n/).every((line) => Buffer.byteLength(line) <= MAX_LINE)) {
      text.getTransferEncoding = () => '8bit';
    }
    const message = await root.build();
    return { message, messageId: root.messageId() };
  }

  async send(mail: ComposedMail): Promise<SendResult> {
    const { message, messageId } = await this.build(mail);
    fs.mkdirSync(this.directory, { recursive: true });
    const file = path.join(this.directory, `${fileStamp(new Date())}-${String(mail.id).padStart(8, '0')}.eml`);
    // Written under a temporary name and renamed, so a reader never sees half a message.
    const partial = `${file}.partial`;
    await fs.promises.writeFile(partial, message);
    await fs.promises.rename(partial, file);
    return { messageId, file };
  }

  close() {}
}

export class SmtpTransport implements MailTransport {
  readonly kind = 'smtp' as const;
  readonly #transport: Transporter;
  constructor(url: string) {
    // Bounded waits: a stuck mail server must not hold the outbox lease forever.
    this.#transport = loadNodemailer().createTransport({
      url,
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 30_000,
    } as TransportOptions);
  }

  async send(mail: ComposedMail): Promise<SendResult> {
    const info = await this.#transport.sendMail({ ...baseMessage(mail), text: mail.text });
    // nodemailer lists refused recipients as strings or as address objects, depending on the version.
    const rejected = ((info.rejected ?? []) as (string | { address: string })[]).map((r) =>
      typeof r === 'string' ? r : r.address,
    );
    return { messageId: info.messageId, rejected };
  }

  close() {
    this.#transport.close();
  }
}

export function createTransport(config: Pick<Config, 'emailUrl' | 'dataDir'>): MailTransport {
  return config.emailUrl === null ? new FileTransport(config.dataDir) : new SmtpTransport(config.emailUrl);
}

/** http(s) links in a text, for the development log line. */
export function linksIn(text: string): string[] {
  return text.match(/https?:\/\/[^\s<>"']+/g) ?? [];
}
