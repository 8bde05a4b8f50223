/** Integration: the edge's Redis-held state against the real Redis (see tools/jest/integration-setup.ts). */
export default {
  displayName: 'edge-gateway:int',
  preset: '../../jest.preset.js',
  rootDir: '.',
  testMatch: ['<rootDir>/src/**/*.int-spec.ts'],
  globalSetup: '<rootDir>/../../tools/jest/integration-setup.ts',
  testTimeout: 30_000,
};
