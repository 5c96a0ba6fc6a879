// Reads the development transport's .eml files the way a person (or a test) would: headers, and the
// decoded plain-text part. Other capabilities' tests may use readMailbox() to find a link in a sent message.
import fs from 'node:fs';
import path from 'node:path';

export interface EmlMessage {
  file: string;
  headers: Map<string, string>;
  /** The decoded text/plain part. */
  text: string;
  raw: string;
}

function parseHeaders(block: string): Map<string, string> {
  const headers = new Map<string, string>();
  for (const line of block.replace(/\r\n[ \t]+/g, ' ').split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim());
  }
  return headers;
}

function decodePart(headers: Map<string, string>, body: string): string {
  const encoding = (headers.get('content-transfer-encoding') ?? '7bit').toLowerCase();
  if (encoding === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (encoding === 'quoted-printable') {
    return Buffer.from(
      body.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex) => String.fromCharCode(parseInt(hex, 16))),
      'latin1',
    ).toString('utf8');
  }
  return body;
}

export function parseEml(file: string): EmlMessage {
  const raw = fs.readFileSync(file, 'utf8');
  const split = raw.indexOf('\r\n\r\n');
  const headers = parseHeaders(raw.slice(0, split));
  const body = raw.slice(split + 4);
  const type = headers.get('content-type') ?? 'text/plain';
  let text = '';
  const boundary = /boundary="?([^";]+)"?/.exec(type)?.[1];
  if (boundary) {
    for (const part of body.split(`--${boundary}`)) {
      const at = part.indexOf('\r\n\r\n');
      if (at < 0) continue;
      const partHeaders = parseHeaders(part.slice(0, at).replace(/^\r\n/, ''));
      if ((partHeaders.get('content-type') ?? '').startsWith('text/plain')) {
        text = decodePart(partHeaders, part.slice(at + 4).replace(/\r\n$/, ''));
      }
    }
  } else {
    text = decodePart(headers, body);
  }
  return { file, headers, text: text.replace(/\r\n/g, '\n'), raw };
}

/** Every .eml under `<dataDir>/mail/`, oldest first (the names sort by time). */
export function readMailbox(dataDir: string): EmlMessage[] {
  const directory = path.join(dataDir, 'mail');
  if (!fs.existsSync(directory)) return [];
  return fs
    .readdirSync(directory)
    .filter((name) => name.endsWith('.eml'))
    .sort()
    .map((name) => parseEml(path.join(directory, name)));
}
