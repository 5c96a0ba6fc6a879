// The authorization server of one app (ctx.oauth), built on first use: oidc-provider (with Koa) is
// the largest set of modules the service has, and a process that never sees an OAuth request or
// token needs none of it (docs/architecture.md, "Lazy loading"). `resource` is known without it.
import type { OAuthServer } from './provider.ts';

type BuiltListener = (server: OAuthServer) => void;

export class LazyOAuthServer {
  /** The protected resource (RFC 8707 / RFC 9728): the API, identified by BASE_URL. */
  readonly resource: string;
  readonly #build: () => Promise<OAuthServer>;
  #building: Promise<OAuthServer> | null = null;
  #built: OAuthServer | null = null;
  readonly #listeners: BuiltListener[] = [];

  /** `build` loads and configures the provider (provider.ts's createOAuthServer). */
  constructor(resource: string, build: () => Promise<OAuthServer>) {
    this.resource = resource;
    this.#build = build;
  }

  /** The server, built by the first call; a failed build is tried again by the next call. */
  get(): Promise<OAuthServer> {
    this.#building ??= this.#build().then(
      (server) => {
        this.#built = server;
        for (const listener of this.#listeners) listener(server);
        return server;
      },
      (error: unknown) => {
        this.#building = null;
        throw error;
      },
    );
    return this.#building;
  }

  /** Runs `listener` with the server once it is built (at once when it is). */
  onBuilt(listener: BuiltListener): void {
    this.#listeners.push(listener);
    if (this.#built) listener(this.#built);
  }
}
