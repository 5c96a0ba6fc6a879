// Showing a secret exactly once across a redirect (a new token, recovery codes): the POST puts it
// in a short-lived cookie, encrypted (util/encryption.ts) and scoped to the page that shows it; that
// page's GET reads it and clears the cookie, so a reload shows nothing. Nothing secret is stored in
// the database, and a re-submitted POST cannot happen (the browser only ever reloads the GET).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { decryptSecret, encryptSecret } from '../util/encryption.ts';
import { pageState } from './render.ts';

const COOKIE = 'svc_once';
const MAX_AGE_SECONDS = 120;

export function setOnce(reply: FastifyReply, pagePath: string, value: unknown) {
  const page = pageState(reply.request);
  const sealed = encryptSecret(page.secretKey, JSON.stringify(value), `once:${pagePath}`);
  reply.setCookie(COOKIE, sealed, {
    path: pagePath,
    httpOnly: true,
    sameSite: 'strict',
    maxAge: MAX_AGE_SECONDS,
    secure: page.secureCookies,
  });
}

export function takeOnce<T>(request: FastifyRequest, reply: FastifyReply, pagePath: string): T | null {
  const sealed = request.cookies?.[COOKIE];
  if (!sealed || !request.page) return null;
  reply.clearCookie(COOKIE, { path: pagePath });
  try {
    return JSON.parse(decryptSecret(request.page.secretKey, sealed, `once:${pagePath}`)) as T;
  } catch {
    return null;
  }
}
