/** The console's unit tests: its pure modules (no DOM), run in Node like every other project's. */
export default {
  displayName: 'console',
  preset: '../../jest.preset.js',
  rootDir: '.',
  testMatch: ['<rootDir>/src/**/*.spec.ts'],
};
