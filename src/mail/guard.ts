// The pre-send guard (docs/mail.md): every to/cc/bcc address of a batch is parsed, lower-cased and
// looked up in one query; suppressed addresses are removed from each message. It lives inside the outbox
// sender, so no call site can skip it.
import type { Kysely } from 'kysely';
import type { Database, Executor } from '../db/schema.ts';
import { parseRecipients, type Mailbox } from './addresses.ts';

export interface RecipientLists {
  to: string[];
  cc: string[];
  bcc: string[];
}

export interface GuardedRecipients {
  to: Mailbox[];
  cc: Mailbox[];
  bcc: Mailbox[];
  /** Lower-cased addresses removed because they are suppressed. */
  suppressed: string[];
  /** Inputs that held no valid address. */
  invalid: string[];
}

/** The active suppressions among `addresses` (already lower-cased), in one query. */
export async function suppressedAmong(db: Executor, addresses: readonly string[]): Promise<Set<string>> {
  const unique = [...new Set(addresses)];
  if (unique.length === 0) return new Set();
  const rows = await db
    .selectFrom('mail_suppressions')
    .select('email')
    .where('released_at', 'is', null)
    .where('email', 'in', unique)
    .execute();
  return new Set(rows.map((row) => row.email));
}

export async function guardBatch(
  db: Kysely<Database>,
  messages: readonly RecipientLists[],
): Promise<GuardedRecipients[]> {
  const parsed = messages.map((message) => {
    const to = parseRecipients(message.to);
    const cc = parseRecipients(message.cc);
    const bcc = parseRecipients(message.bcc);
    return { to, cc, bcc, invalid: [...to.invalid, ...cc.invalid, ...bcc.invalid] };
  });
  const all = parsed.flatMap((p) => [...p.to.mailboxes, ...p.cc.mailboxes, ...p.bcc.mailboxes].map((m) => m.address));
  const blocked = await suppressedAmong(db, all);
  return parsed.map((p) => {
    const suppressed = new Set<string>();
    const keep = (list: Mailbox[]) =>
      list.filter((m) => {
        if (!blocked.has(m.address)) return true;
        suppressed.add(m.address);
        return false;
      });
    return {
      to: keep(p.to.mailboxes),
      cc: keep(p.cc.mailboxes),
      bcc: keep(p.bcc.mailboxes),
      suppressed: [...suppressed],
      invalid: p.invalid,
    };
  });
}
