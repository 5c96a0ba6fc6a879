// The invitation e-mail: plain text (what every client shows) and an equivalent HTML part.
import type { Role } from './teams.ts';

export interface InvitationMailInput {
  teamName: string;
  inviterName: string;
  role: Role;
  message: string | null;
  link: string;
  expiresAt: string;
}

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

export function invitationMail(input: InvitationMailInput): { subject: string; text: string; html: string } {
  const expires = `${input.expiresAt.slice(0, 16).replace('T', ' ')} UTC`;
  const subject = `${input.inviterName} invited you to join ${input.teamName}`;
  const lines = [
    `${input.inviterName} invited you to join the team "${input.teamName}" as ${input.role === 'admin' ? 'an admin' : 'a member'}.`,
    '',
    ...(input.message ? ['Their message:', '', ...input.message.split('\n').map((line) => `> ${line}`), ''] : []),
    'Accept the invitation:',
    input.link,
    '',
    `The link works once and expires on ${expires}. If you did not expect this invitation, ignore this e-mail.`,
  ];
  const html = [
    `<p>${escapeHtml(input.inviterName)} invited you to join the team <strong>${escapeHtml(input.teamName)}</strong> as ${input.role === 'admin' ? 'an admin' : 'a member'}.</p>`,
    ...(input.message ? [`<blockquote>${escapeHtml(input.message).replace(/\n/g, '<br>')}</blockquote>`] : []),
    `<p><a href="${escapeHtml(input.link)}">Accept the invitation</a></p>`,
    `<p>The link works once and expires on ${expires}. If you did not expect this invitation, ignore this e-mail.</p>`,
  ].join('\n');
  return { subject, text: lines.join('\n'), html };
}
