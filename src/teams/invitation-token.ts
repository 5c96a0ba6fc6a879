// Invitation accept tokens: 32 random bytes, base64url (43 characters), carried only in the e-mail.
// The database keeps their SHA-256, so a leaked table cannot be used to join teams.
import { createHash, randomBytes } from 'node:crypto';

const TOKEN = /^[A-Za-z0-9_-]{43}$/;

export const newInvitationToken = () => randomBytes(32).toString('base64url');
export const hashInvitationToken = (token: string) => createHash('sha256').update(token).digest('hex');
/** A cheap syntactic test, so a garbage token is refused without a database lookup. */
export const isWellFormedInvitationToken = (token: string) => TOKEN.test(token);
export const acceptUrl = (baseUrl: string, token: string) => `${baseUrl}/invitations/${token}/`;
