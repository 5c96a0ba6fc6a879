// The layering of src/ (docs/architecture.md, "Layers"), checked by `npm run lint:deps`:
//   composition root  main.ts, serve.ts, app.ts, context.ts, worker-tasks.ts: wire everything, imported by none
//   features          dashboard, mcp, accounts, teams, tokens, oauth, webhooks, mail, products, backup
//   base              http, web, cli, worker, metrics, audit, events, db, util, config*.ts, secrets.ts, app-context.ts
// Imports point down. A feature may use another feature only through its public modules (PUBLIC
// below), and never in a circle.
const FEATURES = ['accounts', 'backup', 'dashboard', 'mail', 'mcp', 'oauth', 'products', 'teams', 'tokens', 'webhooks'];
const FEATURE = `^src/(${FEATURES.join('|')})/`;
const ROOT = '^src/(main|serve|app|context|worker-tasks)\\.ts$';

/**
 * Each feature's public surface: its index.ts, or the service modules named here. Everything else
 * in a feature's folder (routes, pages, CLI commands, helpers) is its own business.
 */
const PUBLIC = {
  accounts: ['users', 'email', 'passwords', 'password-policy', 'session-auth', 'auth-throttle', 'totp'],
  mail: ['outbox'],
  oauth: ['constants'],
  teams: ['teams', 'overview', 'page-access'],
  webhooks: ['ssrf'],
};
const PUBLIC_MODULES = [
  `^src/(${FEATURES.join('|')})/index\\.ts$`,
  ...Object.entries(PUBLIC).map(([feature, modules]) => `^src/${feature}/(${modules.join('|')})\\.ts$`),
];

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'A module must not reach itself through imports that run. Type-only imports are erased before anything runs, and ' +
        'one such circle is by design: the AppContext type names the state each capability keeps (its class), and ' +
        'those capabilities take the context. Between folders, types count too (no-circular-folders).',
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'no-circular-folders',
      severity: 'error',
      comment:
        'Folders must not depend on each other in a circle: teams → accounts → teams is a cycle even when no single module closes it.',
      scope: 'folder',
      from: {},
      to: { circular: true },
    },
    {
      name: 'base-imports-no-feature',
      severity: 'error',
      comment:
        'http/, web/, cli/, worker/, metrics/, audit/, events/, db/ and util/ serve every feature and know none, not even its types.',
      from: { path: '^src/(http|web|cli|worker|metrics|audit|events|db|util)/' },
      to: { path: FEATURE },
    },
    {
      name: 'events-below-http',
      severity: 'error',
      comment: 'events/ is written to by features and read by consumers; it stands on db/ and util/ alone.',
      from: { path: '^src/events/' },
      to: { path: '^src/', pathNot: ['^src/(events|db|util)/'] },
    },
    {
      name: 'db-below-everything',
      severity: 'error',
      comment: 'db/ and util/ are the bottom: they import nothing of the service but each other (and settings).',
      from: { path: '^src/(db|util)/' },
      to: { path: '^src/', pathNot: ['^src/(db|util)/', '^src/config\\.ts$'] },
    },
    {
      name: 'feature-through-public-modules',
      severity: 'error',
      comment:
        "A feature uses another through its index.ts or a named service module (PUBLIC), never the other's internals.",
      from: { path: FEATURE },
      to: { path: FEATURE, pathNot: ['^src/$1/', ...PUBLIC_MODULES] },
    },
    {
      name: 'nothing-imports-the-root',
      severity: 'error',
      comment: 'The composition root wires the app; nothing below it may import it back.',
      from: { pathNot: ROOT },
      to: { path: ROOT },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
