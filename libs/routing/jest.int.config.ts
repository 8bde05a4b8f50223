/** Integration: route breakers and quotas against the real Redis (see tools/jest/integration-setup.ts). */
export default {
  displayName: 'routing:int',
  preset: '../../jest.preset.js',
  rootDir: '.',
  testMatch: ['<rootDir>/src/**/*.int-spec.ts'],
  globalSetup: '<rootDir>/../../tools/jest/integration-setup.ts',
  testTimeout: 30_000,
};
