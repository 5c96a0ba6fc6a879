// The protected resources this authorization server issues tokens for (RFC 8707 resource indicators,
// RFC 9728 metadata): the API, identified by BASE_URL, and, with SERVICE_MCP_ENABLED, the MCP
// endpoint, identified by BASE_URL/mcp. Every access token is for exactly one of them (its `aud`),
// and each refuses the other's tokens (bearer.ts): a token a client obtained for the MCP endpoint
// is no API credential, and the other way round.
import { mcpResourceOf } from './constants.ts';

/** A resource indicator as a client may send it → the audience of the tokens issued for it. */
export function resourceAudiences(config: { baseUrl: string; mcpEnabled: boolean }): ReadonlyMap<string, string> {
  const api = config.baseUrl;
  const audiences = new Map([
    [api, api],
    [`${api}/`, api],
  ]);
  const mcp = mcpResourceOf(config);
  if (mcp) {
    audiences.set(mcp, mcp);
    audiences.set(`${mcp}/`, mcp);
  }
  return audiences;
}
