// Who made a change, in the one shape every door hands to the service that makes it: the API and the
// pages build it from request.identity (requestActor), the operator CLI from the process (cliActor),
// the worker uses SYSTEM_ACTOR. Services pass it to recordAudit() untouched, so an entry says the
// same thing whichever door the change came through.
import os from 'node:os';
import type { FastifyRequest } from 'fastify';
import type { ClientAddresses } from '../http/client-address.ts';
import { isAuthenticated } from '../http/identity.ts';

export type CredentialType = 'session' | 'pat' | 'oauth' | 'jwt' | 'cli';

export interface Actor {
  type: 'user' | 'system';
  /** The user's id and e-mail (null for the system). */
  id: number | null;
  email: string | null;
  /** What proved it: null for the system acting on its own (the delivery worker). */
  credential: { type: CredentialType; id: string | null } | null;
  context: { ip: string | null; user_agent: string | null; request_id: string | null };
}

/** Stored columns are bounded: a header can be long, an entry need not be. */
const USER_AGENT_MAX = 512;

/**
 * The caller of an authenticated request (API or page). The credential id is the identity's
 * (a PAT's row id, an OAuth client and grant, a JWT's jti, a session's hash prefix) without its
 * kind prefix: never a token or anything a token can be rebuilt from.
 */
export function requestActor(request: FastifyRequest, addresses: ClientAddresses): Actor {
  const identity = request.identity;
  if (!isAuthenticated(identity)) throw new Error('requestActor() needs an authenticated request');
  const prefix = `${identity.kind}:`;
  const credentialId = identity.credentialId.startsWith(prefix)
    ? identity.credentialId.slice(prefix.length)
    : identity.credentialId;
  const userAgent = request.headers['user-agent'];
  return {
    type: 'user',
    id: identity.user.id,
    email: identity.user.email,
    credential: { type: identity.kind, id: credentialId },
    context: {
      ip: addresses.of(request.raw) || null,
      user_agent: typeof userAgent === 'string' && userAgent ? userAgent.slice(0, USER_AGENT_MAX) : null,
      request_id: request.id,
    },
  };
}

/** The operating-system account running `svc`, or null where there is none (a container without one). */
function osUser(): string | null {
  try {
    return os.userInfo().username || null;
  } catch {
    return process.env.USER || null;
  }
}

/** The operator CLI: the system, proved by access to the server (the credential names the OS account). */
export function cliActor(command: string): Actor {
  return {
    type: 'system',
    id: null,
    email: null,
    credential: { type: 'cli', id: osUser() },
    context: { ip: null, user_agent: `svc ${command}`, request_id: null },
  };
}

/** The service acting on its own (the delivery worker disabling a failing subscription). */
export const SYSTEM_ACTOR: Actor = Object.freeze({
  type: 'system',
  id: null,
  email: null,
  credential: null,
  context: Object.freeze({ ip: null, user_agent: null, request_id: null }),
});
