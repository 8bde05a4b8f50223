/** End-to-end: the whole suite as processes (real NATS, Redis, PostgreSQL), driven over HTTP. */
export default {
  displayName: 'gateway-e2e',
  preset: '../../jest.preset.js',
  rootDir: '.',
  testMatch: ['<rootDir>/src/**/*.spec.ts'],
  globalSetup: '<rootDir>/src/support/global-setup.ts',
  globalTeardown: '<rootDir>/src/support/global-teardown.ts',
  testTimeout: 60_000,
};
