// The mail capability's state in one app (ctx.mail). Each part is made on first use by the module
// that owns it, so creating a context loads none of their libraries (pino's mail logger, nodemailer),
// and two apps in one process each have their own.
import type { Logger } from 'pino';
import type { IntakeNetwork } from './intake.ts';
import type { MailTransport } from './transport.ts';

export interface MailState {
  /** The logger for mail work outside requests (log.ts's mailLog()). */
  log: Logger | null;
  /** The transport SERVICE_EMAIL_URL chooses (outbox.ts); the worker's mail task closes it when it stops. */
  transport: MailTransport | null;
  /** The SNS intake's network settings (intake.ts's intakeNetwork()). */
  intake: IntakeNetwork | null;
}

export const newMailState = (): MailState => ({ log: null, transport: null, intake: null });
