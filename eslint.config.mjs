import nx from '@nx/eslint-plugin';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import importX from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

// Frameworks and drivers that only adapters may know: the domain stays plain TypeScript.
const ADAPTER_ONLY = ['@nestjs/*', 'typeorm', 'typeorm/*', 'bullmq', 'ioredis', 'isolated-vm', 'express', 'undici', 'pg', '@electric-sql/*', 'pino'];

export default [
  {
    ignores: [
      '**/dist/**',
      '**/node_modules/**',
      '.nx/**',
      '.data/**',
      'coverage/**',
      'libs/*/index.js',
      'tmp/**',
      'apps/console/src/api/schema.gen.ts',
      'libs/client/src/schema.gen.ts',
    ],
  },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    plugins: { '@nx': nx },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  {
    // No relative import leaves its package (apps/*, libs/*, the root's test/): another package is imported by its name,
    // @gatehouse/... (the shared test support as @gatehouse/test-support/<file>). Import cycles: `npm run lint:cycles`.
    files: ['**/*.ts', '**/*.tsx'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: ['tsconfig.json', 'apps/console/tsconfig.json'], noWarnOnMultipleProjects: true })],
    },
    rules: { 'import-x/no-relative-packages': 'error' },
  },
  {
    // Tests read response bodies loosely; production code stays strict.
    files: ['**/test/**/*.ts', '**/*.spec.ts', 'test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['apps/*/src/**/*.ts', 'libs/*/src/**/*.ts'],
    rules: {
      // Arrows point inward: apps -> runtime -> adapters -> domain -> nothing. Adapters (persistence, queue,
      // reactor) never import each other: only apps wire them together. Config is plain values anyone but the
      // domain may read. The client (libs/client) stands alone; apps may use it (the CLI's `gatehouse apply` calls the
      // API through it). Apps never import each other.
      '@nx/enforce-module-boundaries': [
        'error',
        {
          enforceBuildableLibDependency: false,
          allow: [],
          depConstraints: [
            { sourceTag: 'scope:domain', onlyDependOnLibsWithTags: [] },
            { sourceTag: 'scope:config', onlyDependOnLibsWithTags: [] },
            { sourceTag: 'scope:client', onlyDependOnLibsWithTags: [] },
            { sourceTag: 'scope:adapter', onlyDependOnLibsWithTags: ['scope:domain', 'scope:config'] },
            { sourceTag: 'scope:runtime', onlyDependOnLibsWithTags: ['scope:domain', 'scope:config', 'scope:adapter'] },
            { sourceTag: 'scope:app', onlyDependOnLibsWithTags: ['scope:domain', 'scope:config', 'scope:adapter', 'scope:runtime', 'scope:client'] },
          ],
        },
      ],
    },
  },
  {
    files: ['libs/domain/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ADAPTER_ONLY, message: 'libs/domain imports no framework or driver: add a port instead.' }] }],
    },
  },
  {
    files: ['**/*.js', '**/*.cjs', '**/*.mjs'],
    ignores: ['libs/reactor/src/runtime/**'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: {
        require: 'readonly',
        module: 'writable',
        process: 'readonly',
        console: 'readonly',
        __dirname: 'readonly',
        Buffer: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        URL: 'readonly',
      },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // The sandbox runtime: script fragments joined into one function body (libs/reactor/src/sandbox-runtime.ts)
    // and run inside an isolate, where only ECMAScript's own globals exist. Each file declares what it takes from
    // the files before it (/* global */) and gives to those after it (/* exported */).
    files: ['libs/reactor/src/runtime/**/*.js'],
    languageOptions: { sourceType: 'script', ecmaVersion: 2024, globals: {} },
    rules: {
      'no-undef': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { vars: 'all', args: 'none', caughtErrors: 'none' }],
      'no-restricted-globals': ['error', 'require', 'process', 'module'],
    },
  },
];
