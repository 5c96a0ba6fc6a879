// The scope registry: every scope the service knows, with the words shown to people (token page,
// OAuth consent). Deployers add scopes here or with SERVICE_EXTRA_SCOPES; auth code never lists them.
export const BUILTIN_SCOPES: Readonly<Record<string, string>> = {
  'read:profile': 'Read your profile',
  'write:profile': 'Update your profile',
  'read:teams': 'Read your teams and their members',
  'write:teams': 'Create teams, manage members and send invitations',
  'read:products': 'Read products',
  admin: 'Administrative access (staff only)',
  'read:webhooks': 'Read webhook subscriptions and their delivery logs',
  'write:webhooks': 'Create, update and delete webhook subscriptions',
  'webhooks:manage': 'Manage webhook subscriptions (read and write)',
};

export interface ScopeInfo {
  name: string;
  description: string;
}

export class ScopeRegistry {
  readonly #scopes: Map<string, string>;
  constructor(extraScopes: readonly string[] = []) {
    this.#scopes = new Map(Object.entries(BUILTIN_SCOPES));
    for (const scope of extraScopes) if (!this.#scopes.has(scope)) this.#scopes.set(scope, `Custom scope ${scope}`);
  }
  has(name: string): boolean {
    return this.#scopes.has(name);
  }
  names(): string[] {
    return [...this.#scopes.keys()];
  }
  list(): ScopeInfo[] {
    return [...this.#scopes].map(([name, description]) => ({ name, description }));
  }
  describe(name: string): string {
    return this.#scopes.get(name) ?? name;
  }
  /** Names not in the registry, in the order given. */
  unknown(names: readonly string[]): string[] {
    return names.filter((name) => !this.#scopes.has(name));
  }
}

/** Splits an OAuth-style space-separated scope string (also accepts commas). */
export function parseScopeString(value: string): string[] {
  return [...new Set(value.split(/[\s,]+/).filter(Boolean))];
}
