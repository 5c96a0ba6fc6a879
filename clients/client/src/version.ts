// The package's version, sent in User-Agent. A constant rather than a read of package.json, so that it
// survives bundling (svc-cli bundles this package); test/client.test.ts checks it matches package.json.
export const VERSION = '0.1.0';
