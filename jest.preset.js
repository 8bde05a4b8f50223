const nxPreset = require('@nx/jest/preset').default;

/** Every project's jest config extends this: swc for speed, with decorator metadata for NestJS. */
module.exports = {
  ...nxPreset,
  testEnvironment: 'node',
  // As at every app's entrypoint: decorators record type metadata only once this is loaded.
  setupFiles: ['reflect-metadata'],
  // typebox ships ES modules only: jest (CommonJS) needs them compiled like our own files.
  transformIgnorePatterns: ['/node_modules/(?!typebox/)'],
  transform: {
    '^.+\\.(ts|mjs)$': [
      '@swc/jest',
      {
        swcrc: false,
        jsc: {
          target: 'es2022',
          parser: { syntax: 'typescript', decorators: true },
          transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
          keepClassNames: true,
        },
        module: { type: 'commonjs' },
      },
    ],
  },
  moduleFileExtensions: ['ts', 'js', 'mjs', 'json'],
  coverageReporters: ['text-summary'],
  reporters: ['default', require.resolve('./tools/jest/summary-reporter.js')],
};
