// The first-party public device client that the service provides out of the box, for `svc-cli`
// (docs/cli.md): a fixed, documented client_id, the Device Code and refresh grants, every registry
// scope but the reserved `admin` (the default of a registration). It is one of oidc-provider's static
// clients, built from the configuration at start rather than stored in oauth_models: nothing to
// migrate, and turning it off (SERVICE_OAUTH_CLI_CLIENT_ENABLED=false) leaves no row behind that
// would keep it alive. Its metadata goes through the same rules as a dynamic registration.
import type { Config } from '../config.ts';
import type { ScopeRegistry } from '../http/scopes.ts';
import { DEVICE_GRANT } from './constants.ts';
import { normaliseClientMetadata, type ClientMetadata } from './registration.ts';

export const CLI_CLIENT_ID = 'svc-cli';

export function firstPartyClients(config: Config, registry: ScopeRegistry): (ClientMetadata & { client_id: string })[] {
  if (!config.oauth.cliClientEnabled) return [];
  const metadata = normaliseClientMetadata(
    { client_name: 'svc-cli', grant_types: [DEVICE_GRANT], token_endpoint_auth_method: 'none' },
    registry,
  );
  return [{ client_id: CLI_CLIENT_ID, ...metadata }];
}

/** Client ids whose access tokens the API no longer accepts: the CLI client's, when it is turned off. */
export function refusedClientIds(config: Config): ReadonlySet<string> {
  return new Set(config.oauth.cliClientEnabled ? [] : [CLI_CLIENT_ID]);
}
