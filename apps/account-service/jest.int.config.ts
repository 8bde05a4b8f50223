/** Integration: real PostgreSQL and NATS on localhost (see tools/jest/integration-setup.ts). */
export default {
  displayName: 'account-service:int',
  preset: '../../jest.preset.js',
  rootDir: '.',
  testMatch: ['<rootDir>/src/**/*.int-spec.ts'],
  globalSetup: '<rootDir>/../../tools/jest/integration-setup.ts',
  testTimeout: 60_000,
};
