/** Integration: the NATS transport against a real NATS server (its own, started by the spec). */
export default {
  displayName: 'platform:int',
  preset: '../../jest.preset.js',
  rootDir: '.',
  testMatch: ['<rootDir>/src/**/*.int-spec.ts'],
  testTimeout: 30_000,
};
