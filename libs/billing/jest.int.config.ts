/** Integration: the Lua scripts against the real Redis, the SQL window rule against the real PostgreSQL (see tools/jest/integration-setup.ts). */
export default {
  displayName: 'billing:int',
  preset: '../../jest.preset.js',
  rootDir: '.',
  testMatch: ['<rootDir>/src/**/*.int-spec.ts'],
  globalSetup: '<rootDir>/../../tools/jest/integration-setup.ts',
  testTimeout: 30_000,
};
