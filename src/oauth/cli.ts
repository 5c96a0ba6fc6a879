// `svc oauth create-client`: registers a client the way dynamic registration does (same metadata
// rules, registration.ts; same validation by oidc-provider), for deployments with DCR off.
// Prints the client id on the first line and, for a confidential client, the secret on the second:
// it is stored as a digest and never shown again.
import { randomBytes } from 'node:crypto';
import { CommandError, UsageError, optional, required, type Command } from '../cli/framework.ts';
import { ScopeRegistry } from '../http/scopes.ts';
import { KyselyAdapter } from './adapter.ts';
import { DEVICE_GRANT } from './constants.ts';
import { normaliseClientMetadata } from './registration.ts';

const GRANTS: Record<string, string> = { 'device-code': DEVICE_GRANT, 'authorization-code': 'authorization_code' };

const createClient: Command = {
  path: ['oauth', 'create-client'],
  usage:
    'svc oauth create-client --name N --grant device-code|authorization-code [--redirect-uri U …] [--confidential] [--scopes "…"]',
  summary:
    'Registers an OAuth client and prints its id (and, for a confidential client, its secret on a second line, once).',
  options: {
    name: { type: 'string' },
    grant: { type: 'string', multiple: true },
    'redirect-uri': { type: 'string', multiple: true },
    confidential: { type: 'boolean' },
    scopes: { type: 'string' },
  },
  async run(values, { config, open }, io) {
    const name = required(values, 'name').trim();
    const grants = (values.grant as string[] | undefined) ?? [];
    if (grants.length === 0) throw new UsageError('--grant is required (device-code or authorization-code)');
    const unknown = grants.find((g) => !(g in GRANTS));
    if (unknown) throw new UsageError(`--grant must be device-code or authorization-code, got "${unknown}"`);
    const confidential = values.confidential === true;
    const redirectUris = (values['redirect-uri'] as string[] | undefined) ?? [];
    if (confidential && !grants.includes('authorization-code')) {
      throw new UsageError('--confidential is for authorization-code clients (device-code clients are public)');
    }
    if (redirectUris.length && !grants.includes('authorization-code'))
      throw new UsageError('--redirect-uri is for authorization-code clients');
    const scopes = optional(values, 'scopes');
    // A rule the metadata breaks is a RegistrationError, a ValidationError: a bad argument (exit 2).
    const metadata = normaliseClientMetadata(
      {
        client_name: name,
        grant_types: grants.map((g) => GRANTS[g]),
        token_endpoint_auth_method: confidential ? 'client_secret_basic' : 'none',
        ...(redirectUris.length ? { redirect_uris: redirectUris } : {}),
        ...(scopes !== undefined
          ? {
              scope: scopes
                .split(/[\s,]+/)
                .filter(Boolean)
                .join(' '),
            }
          : {}),
      },
      new ScopeRegistry(config.extraScopes),
    );
    const ctx = await open();
    const { provider } = await ctx.oauth.get();
    const clientId = randomBytes(16).toString('base64url');
    const secret = confidential ? randomBytes(48).toString('base64url') : null;
    const record = {
      ...metadata,
      client_id: clientId,
      client_id_issued_at: Math.floor(Date.now() / 1000),
      ...(secret ? { client_secret: secret, client_secret_expires_at: 0 } : {}),
    };
    try {
      // The library's own client metadata validation, as at POST /o/register/.
      await provider.Client.validate(record as never);
    } catch (error) {
      throw new CommandError(
        `invalid client: ${(error as { error_description?: string }).error_description ?? (error as Error).message}`,
      );
    }
    // Stored through the provider's adapter (which keeps only the secret's digest).
    await new KyselyAdapter(ctx.db.kysely, 'Client').upsert(clientId, record as never);
    io.out(clientId);
    if (secret) io.out(secret);
  },
};

export const oauthCommands: Command[] = [createClient];
