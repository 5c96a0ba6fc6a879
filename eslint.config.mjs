// ESLint with typescript-eslint's type-checked rules: the promise rules catch a forgotten await or a
// promise handed to a callback that ignores it, which is how a request crashes the process or loses a row.
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'node_modules/',
      'dist/',
      'clients/*/dist/',
      'data/',
      'test-output/',
      'test-results/',
      'bench/tmp/',
      'clients/client/src/schema.ts',
    ],
  },
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.base],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // node:test's test()/describe() return promises the runner itself awaits.
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [
            { from: 'package', package: 'node:test', name: ['test', 'it', 'describe', 'suite'] },
          ],
        },
      ],
      '@typescript-eslint/no-misused-promises': 'error',
      // A `default` branch is a deliberate catch-all for the cases it names none of.
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      // `typeof import('x')` types the modules loaded lazily with require() on first use.
      '@typescript-eslint/consistent-type-imports': ['error', { disallowTypeAnnotations: false }],
    },
  },
);
