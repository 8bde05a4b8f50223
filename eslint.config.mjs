import nx from '@nx/eslint-plugin';

/**
 * Module boundaries: apps depend on libs only, libs on libs only, and each app only on the shared
 * scope. The e2e project may use the shared libs; deployment config depends on nothing. Every lib
 * has a layer (model → domain → infra) and depends only on its own layer or the ones before it.
 */
export default [
  ...nx.configs['flat/base'],
  ...nx.configs['flat/typescript'],
  {
    ignores: ['**/dist', '**/node_modules', '**/tmp', '**/generated/**', '**/coverage', '.nx'],
  },
  {
    files: ['**/*.ts'],
    rules: {
      '@nx/enforce-module-boundaries': [
        'error',
        {
          enforceBuildableLibDependency: true,
          allow: [],
          depConstraints: [
            { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:lib'] },
            { sourceTag: 'type:e2e', onlyDependOnLibsWithTags: ['type:lib'] },
            { sourceTag: 'type:lib', onlyDependOnLibsWithTags: ['type:lib'] },
            { sourceTag: 'type:config', onlyDependOnLibsWithTags: [] },
            { sourceTag: 'scope:edge', onlyDependOnLibsWithTags: ['scope:shared'] },
            { sourceTag: 'scope:inference', onlyDependOnLibsWithTags: ['scope:shared'] },
            { sourceTag: 'scope:keys', onlyDependOnLibsWithTags: ['scope:shared'] },
            { sourceTag: 'scope:accounts', onlyDependOnLibsWithTags: ['scope:shared'] },
            { sourceTag: 'scope:metering', onlyDependOnLibsWithTags: ['scope:shared'] },
            { sourceTag: 'scope:video', onlyDependOnLibsWithTags: ['scope:shared'] },
            { sourceTag: 'scope:e2e', onlyDependOnLibsWithTags: ['scope:shared'] },
            { sourceTag: 'scope:shared', onlyDependOnLibsWithTags: ['scope:shared'] },
            { sourceTag: 'scope:deploy', onlyDependOnLibsWithTags: [] },
            // Layers of the libs: contracts and errors (model) know nothing else; rules (domain) build
            // on the model only; I/O (infra: NATS, Redis, PostgreSQL, HTTP, files) may use both.
            { sourceTag: 'layer:model', onlyDependOnLibsWithTags: ['layer:model'] },
            { sourceTag: 'layer:domain', onlyDependOnLibsWithTags: ['layer:model', 'layer:domain'] },
            { sourceTag: 'layer:infra', onlyDependOnLibsWithTags: ['layer:model', 'layer:domain', 'layer:infra'] },
          ],
        },
      ],
      '@typescript-eslint/no-explicit-any': 'off',
      // Env classes annotate numbers on purpose: parseEnv converts by the emitted type metadata.
      '@typescript-eslint/no-inferrable-types': ['error', { ignoreProperties: true }],
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  {
    // Providers speak the canonical model only: the client side (formats, routes) builds on them, never the reverse.
    files: ['libs/providers/src/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { paths: [{ name: '@gateway/client-formats', message: 'Providers must not import client formats; use @gateway/canonical.' }] },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.cjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
];
