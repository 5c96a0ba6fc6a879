// login, logout, whoami, status: getting, dropping and checking the credentials in hosts.json.
import { ApiError, createClient } from 'svc-client';
import { openBrowser } from '../browser.ts';
import { str, type Command, type Context } from '../command.ts';
import { AuthRequired, CliFailure, UsageError } from '../failures.ts';
import { readHosts, withLock, writeHosts, type Profile } from '../hosts.ts';
import { printJson, printRecord } from '../io.ts';
import { OAuthError, pollDeviceToken, revokeToken, startDeviceAuthorization } from '../oauth.ts';
import { DEFAULT_SERVER, normaliseServer, withTokens } from '../session.ts';
import { VERSION } from '../version.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** RFC 8628 on the client side: show the code, open the page, poll at the server's pace. */
async function deviceLogin(
  ctx: Context,
  server: string,
  scopes: string | undefined,
  browser: boolean,
): Promise<Profile> {
  const { io } = ctx;
  let auth;
  try {
    auth = await startDeviceAuthorization(server, scopes);
  } catch (error) {
    if (!(error instanceof OAuthError)) throw error;
    if (error.error === 'invalid_client') {
      throw new AuthRequired(
        `${server} does not accept svc-cli logins (its operator turned the svc-cli client off): use a personal access token with \`svc-cli login --with-token\``,
      );
    }
    if (error.error === 'invalid_scope') throw new UsageError(`--scopes: ${error.message}`);
    throw new CliFailure(1, `the login could not start: ${error.message}`);
  }
  // The address and the code each on a line of their own, to copy (or for a script to read).
  io.err('To log in, open this page in a browser:');
  io.err(auth.verification_uri);
  io.err('and enter this code:');
  io.err(auth.user_code);
  if (browser && openBrowser(auth.verification_uri_complete ?? auth.verification_uri, io.env))
    io.err('(opening it in your browser)');
  io.err('Waiting for the approval…');
  let interval = auth.interval ?? 5;
  const deadline = Date.now() + auth.expires_in * 1000;
  const expired = () => new AuthRequired('the code expired before it was approved: run `svc-cli login` again');
  for (;;) {
    await sleep(interval * 1000);
    if (Date.now() > deadline) throw expired();
    try {
      return withTokens(
        { url: server, auth: 'oauth', access_token: '' },
        await pollDeviceToken(server, auth.device_code),
      );
    } catch (error) {
      if (!(error instanceof OAuthError)) throw error;
      if (error.error === 'authorization_pending') continue;
      if (error.error === 'slow_down') {
        interval += 5;
        continue;
      }
      if (error.error === 'access_denied') throw new AuthRequired('the login was denied in the browser');
      if (error.error === 'expired_token') throw expired();
      throw new AuthRequired(`the login failed: ${error.message}`);
    }
  }
}

const login: Command = {
  path: ['login'],
  usage: '[--url URL] [--scopes "SCOPES"] [--no-browser] [--with-token]',
  summary: 'Log in to a server (device flow in a browser, or a token from stdin)',
  details: [
    'Prints a code and an address; open it (svc-cli opens your browser when there is one), log in, type the',
    'code and approve. The credentials are stored in hosts.json for the profile (--profile, default "default").',
    'With --with-token, a personal access token is read from standard input instead.',
  ],
  options: {
    url: {
      type: 'string',
      help: "the server, e.g. https://api.example.com (default: SVC_URL, the profile's, http://localhost:8000)",
    },
    scopes: { type: 'string', help: 'the SCOPES to ask for, space-separated (default: all but admin)' },
    'no-browser': { type: 'boolean', help: 'do not open a browser; only print the address and the code' },
    'with-token': { type: 'boolean', help: 'read a personal access token from standard input' },
  },
  args: { min: 0, max: 0 },
  async run(ctx, args) {
    const { io, configDir, profileName } = ctx;
    const server = normaliseServer(
      str(args, 'url') ?? (io.env.SVC_URL || readHosts(configDir).profiles[profileName]?.url || DEFAULT_SERVER),
    );
    let profile: Profile;
    if (args.values['with-token']) {
      const token = (await io.readStdin()).trim();
      if (!token) throw new UsageError('--with-token reads a token from standard input, and it was empty');
      profile = { url: server, auth: 'token', access_token: token };
    } else {
      profile = await deviceLogin(ctx, server, str(args, 'scopes'), args.values['no-browser'] !== true);
    }
    const client = createClient({ baseUrl: server, token: profile.access_token, userAgent: `svc-cli/${VERSION}` });
    try {
      profile.user = (await client.GET('/api/v1/me/')).email;
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) throw new AuthRequired(`${server} refused the token`);
      // 403: a token without read:profile still works for what its scopes allow.
      if (!(error instanceof ApiError && error.status === 403)) throw error;
      profile.user = null;
    }
    await withLock(configDir, async () => {
      const hosts = readHosts(configDir);
      hosts.profiles[profileName] = profile;
      writeHosts(configDir, hosts);
    });
    io.err(`Logged in to ${server} as ${profile.user ?? '(unknown: the token cannot read the profile)'}.`);
  },
};

const logout: Command = {
  path: ['logout'],
  usage: '',
  summary: 'Revoke the stored tokens at the server and forget them',
  args: { min: 0, max: 0 },
  async run({ io, configDir, profileName }) {
    const profile = readHosts(configDir).profiles[profileName];
    if (!profile)
      throw new AuthRequired(`not logged in${profileName === 'default' ? '' : ` (profile ${profileName})`}`);
    const problems: string[] = [];
    if (profile.auth === 'oauth') {
      const tokens: [string | undefined, 'refresh_token' | 'access_token'][] = [
        [profile.refresh_token, 'refresh_token'],
        [profile.access_token, 'access_token'],
      ];
      for (const [token, hint] of tokens) {
        if (token)
          await revokeToken(profile.url, token, hint).catch((error: Error) =>
            problems.push(`${hint}: ${error.message}`),
          );
      }
    }
    await withLock(configDir, async () => {
      const hosts = readHosts(configDir);
      delete hosts.profiles[profileName];
      writeHosts(configDir, hosts);
    });
    if (problems.length > 0)
      throw new CliFailure(
        1,
        `removed the credentials here, but the server did not revoke them: ${problems.join('; ')}`,
      );
    io.err(`Logged out of ${profile.url}.`);
    if (profile.auth === 'token')
      io.err('The personal access token itself still works: revoke it on the tokens page (/accounts/tokens/).');
  },
};

/** Who the credentials are, checked with the server. */
async function identify(ctx: Context) {
  const session = ctx.session();
  const me = await session.client.GET('/api/v1/me/');
  const profile = session.profile;
  const oauth = session.source === 'file' && profile?.auth === 'oauth';
  return {
    email: me.email,
    server: session.server,
    auth: session.source === 'env' ? 'SVC_TOKEN' : oauth ? 'oauth' : 'token',
    scopes: oauth && profile?.scope !== undefined ? profile.scope.split(' ').filter(Boolean) : null,
    expires_at: oauth ? (profile?.expires_at ?? null) : null,
    profile: session.source === 'file' ? ctx.profileName : null,
  };
}

const UNKNOWN_SCOPES = "(not known here: a personal access token's scopes are on its tokens page)";

const whoami: Command = {
  path: ['whoami'],
  usage: '',
  summary: 'Print the e-mail address, the server and the scopes of the credentials',
  args: { min: 0, max: 0 },
  async run(ctx) {
    const who = await identify(ctx);
    if (ctx.json) return printJson(ctx.io, { email: who.email, server: who.server, scopes: who.scopes });
    printRecord(ctx.io, [
      ['email', who.email],
      ['server', who.server],
      ['scopes', who.scopes ? who.scopes.join(' ') : UNKNOWN_SCOPES],
    ]);
  },
};

const status: Command = {
  path: ['status'],
  usage: '',
  summary: 'Check the stored credentials (or SVC_TOKEN) against the server',
  args: { min: 0, max: 0 },
  async run(ctx) {
    const who = await identify(ctx);
    if (ctx.json) return printJson(ctx.io, { ...who, valid: true });
    printRecord(ctx.io, [
      ['server', who.server],
      ['profile', who.profile ?? '(none: SVC_TOKEN)'],
      ['user', who.email],
      [
        'auth',
        who.auth === 'oauth'
          ? 'device login (refreshed automatically)'
          : who.auth === 'token'
            ? 'personal access token'
            : 'SVC_TOKEN',
      ],
      ['expires', who.expires_at ?? '-'],
      ['scopes', who.scopes ? who.scopes.join(' ') : UNKNOWN_SCOPES],
      ['status', 'valid'],
    ]);
  },
};

export const authCommands: Command[] = [login, logout, whoami, status];
