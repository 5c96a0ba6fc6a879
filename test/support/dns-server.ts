// A tiny authoritative DNS responder over UDP (node:dgram), the local stand-in for the world's DNS
// in SSRF tests: SERVICE_DNS_SERVERS=127.0.0.1:<port> points the service's resolver here, and the
// test decides every answer (and can change it between creation and delivery).
// Hand-written: it answers A and AAAA questions only, which is all the tests need, in ~60 lines.
import dgram from 'node:dgram';
import ipaddr from 'ipaddr.js';

export interface DnsRecords {
  A?: string[];
  AAAA?: string[];
}

export interface DnsServer {
  address: string;
  records: Map<string, DnsRecords>;
  queries: string[];
  close(): Promise<void>;
}

const TYPE_A = 1;
const TYPE_AAAA = 28;

function readName(message: Buffer, offset: number): { name: string; end: number } {
  const labels: string[] = [];
  let at = offset;
  while (message[at] !== 0) {
    const length = message[at];
    labels.push(message.subarray(at + 1, at + 1 + length).toString('ascii'));
    at += length + 1;
  }
  return { name: labels.join('.').toLowerCase(), end: at + 1 };
}

function answerFor(query: Buffer, records: Map<string, DnsRecords>, log: string[]): Buffer {
  const { name, end } = readName(query, 12);
  const type = query.readUInt16BE(end);
  log.push(`${name} ${type === TYPE_A ? 'A' : type === TYPE_AAAA ? 'AAAA' : type}`);
  const question = query.subarray(12, end + 4);
  const entry = records.get(name);
  const addresses = !entry ? [] : type === TYPE_A ? (entry.A ?? []) : type === TYPE_AAAA ? (entry.AAAA ?? []) : [];
  const header = Buffer.alloc(12);
  header.writeUInt16BE(query.readUInt16BE(0), 0); // id
  header.writeUInt16BE(0x8180 | (entry ? 0 : 3), 2); // response, recursion desired+available, NXDOMAIN when unknown
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(addresses.length, 6);
  const answers = addresses.map((address) => {
    const rdata = Buffer.from(ipaddr.parse(address).toByteArray());
    const rr = Buffer.alloc(12);
    rr.writeUInt16BE(0xc00c, 0); // pointer to the question's name
    rr.writeUInt16BE(type, 2);
    rr.writeUInt16BE(1, 4); // IN
    rr.writeUInt32BE(0, 6); // TTL 0: every lookup asks again
    rr.writeUInt16BE(rdata.length, 10);
    return Buffer.concat([rr, rdata]);
  });
  return Buffer.concat([header, question, ...answers]);
}

export async function startDnsServer(initial: Record<string, DnsRecords> = {}): Promise<DnsServer> {
  const socket = dgram.createSocket('udp4');
  const records = new Map(Object.entries(initial).map(([name, value]) => [name.toLowerCase(), value]));
  const queries: string[] = [];
  socket.on('message', (message, remote) => {
    try {
      socket.send(answerFor(message, records, queries), remote.port, remote.address);
    } catch {
      // A malformed query gets no answer, as from a real server under attack.
    }
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${socket.address().port}`,
    records,
    queries,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
