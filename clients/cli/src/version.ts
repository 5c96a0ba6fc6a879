// svc-cli's version (User-Agent, --version); test/cli.test.ts checks it matches package.json.
export const VERSION = '0.1.0';
